/**
 * What a valid pair of NATS hand-off streams looks like, said once: their default names and subjects,
 * JetStream's nanoseconds, and the work stream's duplicate window (at least
 * {@link MIN_DUPLICATE_WINDOW_MS}). `ensureNatsStreams` (setup.ts, ensure-stream.ts) creates and
 * compares streams by it; `createNatsWorker` (worker.ts) checks them by it at start.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { describe } from '../run-and-settle.js';
import { optionsInvalid } from '../worker-checks.js';
import { MIN_DUPLICATE_WINDOW_MS } from './subjects.js';

/** Nanoseconds per millisecond: JetStream's durations are in nanoseconds. */
export const NANOS = 1_000_000;

/** The streams' names and the subjects' first token, as every NATS function takes them. */
export interface StreamNames {
  stream: string;
  deadLetterStream: string;
  subjectPrefix: string;
}

/** `options`' stream names, with the defaults `WEBHOOKS`, `WEBHOOKS_DEAD` and `webhooks`. */
export function streamNames(options: Partial<StreamNames>): StreamNames {
  const { stream = 'WEBHOOKS', deadLetterStream = 'WEBHOOKS_DEAD', subjectPrefix = 'webhooks' } = options;
  return { stream, deadLetterStream, subjectPrefix };
}

/** The subjects the work stream holds: `<prefix>.>`. */
export const workSubjects = (prefix: string): string => `${prefix}.>`;
/** The subjects the dead-letter stream holds: `<prefix>-dead.>`. */
export const deadLetterSubjects = (prefix: string): string => `${prefix}-dead.>`;

/** Whether a work stream's `duplicate_window` (nanoseconds) is one a worker starts with. */
export const windowAccepted = (nanos: number): boolean => nanos / NANOS >= MIN_DUPLICATE_WINDOW_MS;

/**
 * A worker's check at start: both streams are there and the work stream's duplicate window covers the
 * senders' retries; `options_invalid` of `factory` naming the fix otherwise.
 */
export async function checkStreams(
  jsm: JetStreamManager,
  names: StreamNames,
  factory: string,
): Promise<void> {
  const { stream, deadLetterStream, subjectPrefix } = names;
  const missing = (name: string, what: string, subjects: string) => (error: unknown) => {
    throw optionsInvalid(
      factory,
      `the ${what} ${name} is not there (${describe(error)}); create it with subjects ['${subjects}'].`,
    );
  };
  const info = await jsm.streams.info(stream).catch(missing(stream, 'stream', workSubjects(subjectPrefix)));
  const window = info.config.duplicate_window ?? 0;
  if (!windowAccepted(window))
    throw optionsInvalid(
      factory,
      `the stream ${stream} has a duplicate window of ${window / NANOS / 1_000} s; it needs at least ${MIN_DUPLICATE_WINDOW_MS / 1_000} s, above the senders' retry span (the email service retries for about 2 minutes), or a retried delivery is stored twice. Set the stream's duplicate_window (nats CLI: --dupe-window) to 5 minutes: jsm.streams.update('${stream}', { duplicate_window: 300_000_000_000 }).`,
    );
  await jsm.streams
    .info(deadLetterStream)
    .catch(missing(deadLetterStream, 'dead-letter stream', deadLetterSubjects(subjectPrefix)));
}
