/**
 * The hand-off job MAC as docs/handoff-jobs.md states it, computed with node:crypto (never the library's
 * own code): tests use it to check the receiver's MAC and to forge jobs that hold a MAC under a
 * secret the worker lacks.
 */
import { Buffer } from 'node:buffer';
import { createHmac, hkdfSync } from 'node:crypto';
import type { HandoffJob } from '../../src/handoff/job/types.js';

const INFO = 'svc-webhooks/handoff-job/v2';

/** The `mac` of `job` (all its other fields and the decoded body) under the job key of `secret`. */
export function expectedMac(secret: string, job: Omit<HandoffJob, 'mac'>): string {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO, 32));
  const sorted = (record: Readonly<Record<string, string>>) =>
    Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const headers = sorted(job.headers);
  const fields = Buffer.from(
    JSON.stringify([
      INFO,
      job.v,
      job.service,
      job.deliveryId,
      job.event,
      job.dedupKey,
      job.receivedAt,
      job.secretIndex,
      headers,
      // A job carrying a route has eleven elements: the traceparent or null, then [path, params];
      // else a job carrying a traceparent has it as a tenth element, and one without has nine.
      ...(job.route !== undefined
        ? [job.traceparent ?? null, [job.route.path, sorted(job.route.params)]]
        : job.traceparent === undefined
          ? []
          : [job.traceparent]),
    ]),
  );
  const length = Buffer.alloc(4);
  length.writeUInt32BE(fields.length);
  return createHmac('sha256', key)
    .update(length)
    .update(fields)
    .update(Buffer.from(job.body, 'base64'))
    .digest('hex');
}

/** `job` with `changes` applied and its `mac` recomputed under `secret`. */
export function resigned(
  job: HandoffJob,
  secret: string,
  changes: Partial<Omit<HandoffJob, 'mac'>> = {},
): HandoffJob {
  const { mac: _mac, ...rest } = { ...job, ...changes };
  return { ...rest, mac: expectedMac(secret, rest) };
}
