/**
 * The bytes of a job's body without decoding its base64 again: the receive path remembers the
 * verified bytes of each job it builds, and a target in this package that stores bytes (the
 * database inbox) reads them here. A job built anywhere else is decoded from its `body`.
 */
import { fromBase64 } from './job-codec.js';
import type { HandoffJob } from './types.js';

const bodies = new WeakMap<HandoffJob, { readonly body: string; readonly bytes: Uint8Array }>();

/** Remembers `bytes` as the body of `job` (the bytes its base64 `body` was made from). */
export function rememberJobBody(job: HandoffJob, bytes: Uint8Array): void {
  bodies.set(job, { body: job.body, bytes });
}

/** The bytes of `job.body`: the remembered ones while `body` is the string made from them, else decoded. */
export function jobBodyBytes(job: HandoffJob): Uint8Array {
  const entry = bodies.get(job);
  return entry !== undefined && entry.body === job.body ? entry.bytes : fromBase64(job.body);
}
