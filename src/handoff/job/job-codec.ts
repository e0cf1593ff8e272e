/**
 * Building a {@link HandoffJob} from a verified delivery, and checking one read back from an engine.
 * Base64 without `node:` modules (the root entry runs on Web-Crypto-only runtimes).
 */

import { validTraceparent } from '../../core/telemetry.js';
import { WebhookError } from '../../shared/errors.js';
import { MAX_HANDOFF_BODY_BYTES } from './check-target.js';
import { HANDOFF_JOB_VERSION, type HandoffJob } from './types.js';

/** Largest `body` a worker reads back: the base64 length of {@link MAX_HANDOFF_BODY_BYTES} (8 MiB). */
const MAX_JOB_BODY_CHARS = 4 * Math.ceil(MAX_HANDOFF_BODY_BYTES / 3);

const MAC = /^[0-9a-f]{64}$/;

/** Node's and Bun's `Buffer`, a global there (no `node:` import): where present, it encodes natively. */
const NativeBuffer = (
  globalThis as {
    Buffer?: { from(b: ArrayBufferLike, offset: number, length: number): { toString(e: 'base64'): string } };
  }
).Buffer;

/**
 * Base64 of `bytes`: natively where `Buffer` exists (the receiver's hand-off step encodes every
 * body: docs/benchmarks.md "Inbox acknowledgement"), else through `btoa` in chunks so large bodies
 * do not overflow the argument list.
 */
export function toBase64(bytes: Uint8Array): string {
  if (NativeBuffer)
    return NativeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Bytes of base64 `text`; throws on anything that is not base64. */
export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function invalid(reason: string): WebhookError {
  return new WebhookError('job_invalid', `Invalid hand-off job: ${reason}.`);
}

function isText(value: unknown, max = 2048): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max;
}

/** A string-valued record (a job's `headers`, a route's `params`). */
function isStrings(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const item of Object.values(value)) if (typeof item !== 'string') return false;
  return true;
}

/** A job's `route` as the receiver writes it (core/route-secrets.ts `routeOf`). */
function isRoute(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { path, params } = value as Record<string, unknown>;
  return typeof path === 'string' && isStrings(params);
}

/**
 * The job `data` as a {@link HandoffJob} of `service`, or a `job_invalid` error naming the first
 * problem (a job written by hand, by another library version, or for the other service). The shape
 * only: the caller checks the MAC (job-mac.ts). The reason never quotes the job's content beyond
 * field names.
 */
export function checkJob(data: unknown, service: string): HandoffJob {
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw invalid('job data is not an object');
  const job = data as Record<string, unknown>;
  if (job.v !== HANDOFF_JOB_VERSION)
    throw invalid(`format version ${JSON.stringify(job.v) ?? 'undefined'} is not ${HANDOFF_JOB_VERSION}`);
  if (job.service !== service) throw invalid(`job of another service, not '${service}'`);
  for (const field of ['deliveryId', 'event', 'dedupKey'] as const) {
    if (!isText(job[field])) throw invalid(`${field} is not a non-empty string`);
  }
  if (typeof job.receivedAt !== 'number' || !Number.isFinite(job.receivedAt))
    throw invalid('receivedAt is not a number');
  if (!Number.isSafeInteger(job.secretIndex) || (job.secretIndex as number) < 0)
    throw invalid('secretIndex is not a whole number');
  const headers = job.headers;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw invalid('headers is not an object');
  if (!isStrings(headers)) throw invalid('a header value is not a string');
  if (job.traceparent !== undefined && validTraceparent(job.traceparent) === undefined)
    throw invalid('traceparent is not a W3C traceparent');
  if (job.route !== undefined && !isRoute(job.route))
    throw invalid('route is not { path, params } of strings');
  if (typeof job.body !== 'string' || job.body.length > MAX_JOB_BODY_CHARS)
    throw invalid('body is not a base64 string');
  if (typeof job.mac !== 'string' || !MAC.test(job.mac)) throw invalid('mac is not 64 hex digits');
  return job as unknown as HandoffJob;
}
