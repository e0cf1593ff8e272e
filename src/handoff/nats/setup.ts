/**
 * The streams a NATS JetStream hand-off needs, in one call: the work stream (`<prefix>.>`, a
 * duplicate window the worker accepts) and the dead-letter stream (`<prefix>-dead.>`, no `max_age`),
 * both on file storage with limits retention (docs/handoff.md "NATS JetStream"). Created when missing,
 * compared when present: safe at every deploy, and an existing stream is never changed silently.
 */
import type { JetStreamClient } from '@nats-io/jetstream';
import type { EnsuredResource } from '../ensure.js';
import { optionsInvalid } from '../worker-checks.js';
import { ensureStream, FACTORY } from './ensure-stream.js';
import { deadLetterSubjects, NANOS, streamNames, workSubjects } from './streams.js';
import { MIN_DUPLICATE_WINDOW_MS } from './subjects.js';

/**
 * Options of {@link ensureNatsStreams}: the names as given to `createNatsHandoff` and
 * `createNatsWorker`, and the streams' settings.
 *
 * @example
 * ```ts
 * const options: NatsStreamsOptions = { js, duplicateWindowMs: 300_000, maxAgeMs: 7 * 86_400_000 };
 * ```
 */
export interface NatsStreamsOptions {
  /** Your JetStream client (`jetstream(nc)`); the streams are managed through its `jetstreamManager()`. */
  js: Pick<JetStreamClient, 'jetstreamManager'>;
  /** The work stream. Default `'WEBHOOKS'`. */
  stream?: string;
  /** The dead-letter stream. Default `'WEBHOOKS_DEAD'`. */
  deadLetterStream?: string;
  /** Default `'webhooks'`: subjects `webhooks.>` and `webhooks-dead.>`. */
  subjectPrefix?: string;
  /** `duplicate_window` of both streams, in ms: 180 000 (3 minutes, the worker's minimum) or more. Default 300 000. */
  duplicateWindowMs?: number;
  /** `max_age` of the work stream, in ms (0: kept until its other limits). Default 1 209 600 000 (14 days). */
  maxAgeMs?: number;
  /** `num_replicas` of both streams (a clustered server: 3). Default 1. */
  replicas?: number;
  /** Change an existing stream's settings that JetStream can change, instead of refusing it. Default false. */
  update?: boolean;
}

function wholeMs(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw optionsInvalid(FACTORY, `${name} must be a whole number of ms from ${min} (got ${String(value)}).`);
  return value;
}

/**
 * Creates the work and dead-letter streams of the NATS hand-off when missing, with the settings
 * `createNatsWorker` accepts at start: subjects `<prefix>.>` and `<prefix>-dead.>`, file storage,
 * limits retention, a 5-minute duplicate window, `max_age` 14 days on the work stream and none on the
 * dead letters. Idempotent: a stream with those settings is left as it is (no update call), so run it
 * at every deploy. A stream with other settings is refused with `options_invalid` naming each setting,
 * its value and the fix, and nothing is changed, unless `update: true` (then the settings JetStream
 * can change are; storage and retention never are). `svc-webhooks setup nats` runs it from the shell.
 *
 * @example
 * ```ts
 * import { jetstream } from '@nats-io/jetstream';
 * import { connect } from '@nats-io/transport-node';
 * import { ensureNatsStreams } from '@svc/webhooks/nats';
 *
 * const nc = await connect({ servers: process.env.NATS_URL! });
 * const { stream } = await ensureNatsStreams({ js: jetstream(nc) });
 * console.log(stream.name, stream.outcome); // WEBHOOKS created, then WEBHOOKS unchanged
 * ```
 */
export async function ensureNatsStreams(
  options: NatsStreamsOptions,
): Promise<{ stream: EnsuredResource; deadLetterStream: EnsuredResource }> {
  const {
    js,
    duplicateWindowMs = 300_000,
    maxAgeMs = 1_209_600_000,
    replicas = 1,
    update = false,
  } = options ?? ({} as NatsStreamsOptions);
  const { stream, deadLetterStream, subjectPrefix } = streamNames(options ?? {});
  if (typeof js?.jetstreamManager !== 'function')
    throw optionsInvalid(FACTORY, 'js must be a JetStream client (jetstream(nc) of @nats-io/jetstream).');
  if (typeof subjectPrefix !== 'string' || !/^[A-Za-z0-9_-]+$/.test(subjectPrefix))
    throw optionsInvalid(FACTORY, 'subjectPrefix must be one subject token (letters, digits, _ and -).');
  for (const [name, value] of [
    ['stream', stream],
    ['deadLetterStream', deadLetterStream],
  ] as const)
    if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+$/.test(value))
      throw optionsInvalid(FACTORY, `${name} must be a stream name (letters, digits, _ and -).`);
  if (stream === deadLetterStream)
    throw optionsInvalid(FACTORY, 'stream and deadLetterStream must be two streams.');
  wholeMs('duplicateWindowMs', duplicateWindowMs, MIN_DUPLICATE_WINDOW_MS);
  if (wholeMs('maxAgeMs', maxAgeMs, 0) !== 0 && maxAgeMs < duplicateWindowMs)
    throw optionsInvalid(FACTORY, 'maxAgeMs must be 0 (unlimited) or at least duplicateWindowMs.');
  if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 5)
    throw optionsInvalid(FACTORY, 'replicas must be a whole number from 1 to 5.');
  const jsm = await js.jetstreamManager();
  const common = {
    retention: 'limits',
    storage: 'file',
    duplicate_window: duplicateWindowMs * NANOS,
    num_replicas: replicas,
  } as const;
  return {
    stream: await ensureStream(
      jsm,
      { name: stream, subjects: [workSubjects(subjectPrefix)], max_age: maxAgeMs * NANOS, ...common },
      true,
      update,
    ),
    deadLetterStream: await ensureStream(
      jsm,
      { name: deadLetterStream, subjects: [deadLetterSubjects(subjectPrefix)], max_age: 0, ...common },
      false,
      update,
    ),
  };
}
