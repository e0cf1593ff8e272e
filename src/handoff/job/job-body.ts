/**
 * The bytes of a job's body without decoding its base64 again, and the receiver's parse of them: the
 * receive path remembers the verified bytes (and the event it parsed from them) of each job it
 * builds, and a target in this package that stores bytes (the database inbox) reads them here. A job
 * built anywhere else is decoded from its `body`, and parsed by whoever needs it.
 */
import { fromBase64 } from './job-codec.js';
import type { HandoffJob } from './types.js';

interface Remembered {
  readonly body: string;
  readonly bytes: Uint8Array;
  readonly event: object | undefined;
}

const bodies = new WeakMap<HandoffJob, Remembered>();

/** Targets that read the receiver's parse (the database inbox); others are not handed it to keep. */
const parseReaders = new WeakSet<object>();

/**
 * Marks `target` as one that reads {@link jobParsedEvent}. Only such a target's jobs keep the parsed
 * event: a queue that holds its jobs while its server is away would otherwise hold each body twice.
 */
export function readsParsedEvent(target: object): void {
  parseReaders.add(target);
}

/** Whether `target` reads the receiver's parse (see {@link readsParsedEvent}). */
export function wantsParsedEvent(target: object): boolean {
  return parseReaders.has(target);
}

/**
 * Remembers `bytes` as the body of `job` (the bytes its base64 `body` was made from) and `event`, the
 * receiver's parse of them (none for a delivery that failed the schema).
 */
export function rememberJobBody(job: HandoffJob, bytes: Uint8Array, event?: object): void {
  bodies.set(job, { body: job.body, bytes, event });
}

/** The remembered entry while `job.body` is still the string made from its bytes. */
function current(job: HandoffJob): Remembered | undefined {
  const entry = bodies.get(job);
  return entry !== undefined && entry.body === job.body ? entry : undefined;
}

/** The bytes of `job.body`: the remembered ones while `body` is the string made from them, else decoded. */
export function jobBodyBytes(job: HandoffJob): Uint8Array {
  return current(job)?.bytes ?? fromBase64(job.body);
}

/** The event the receiver parsed from `job.body`'s bytes, while `body` is still theirs; else undefined. */
export function jobParsedEvent(job: HandoffJob): object | undefined {
  return current(job)?.event;
}
