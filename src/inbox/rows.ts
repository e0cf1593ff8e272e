/** Database rows of the inbox table as {@link InboxRow}s, and a claimed row as the job it reruns. */
import { toBase64 } from '../handoff/job/job-codec.js';
import { HANDOFF_JOB_VERSION, type HandoffJob } from '../handoff/job/types.js';
import type { DbRow } from './db.js';
import type { InboxRow, InboxRowDetail, InboxStatus } from './types.js';

const num = (value: unknown): number => Number(value);
const numOrNull = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);
const strOrNull = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value);

export function toRow(row: DbRow): InboxRow {
  return {
    id: num(row.id),
    dedupKey: String(row.dedup_key),
    service: String(row.service),
    event: String(row.event),
    deliveryId: String(row.delivery_id),
    eventAt: num(row.event_at),
    orderingKey: strOrNull(row.ordering_key),
    status: String(row.status) as InboxStatus,
    attempts: num(row.attempts),
    runAt: num(row.run_at),
    leaseUntil: numOrNull(row.lease_until),
    fence: num(row.fence),
    lastErrorCode: strOrNull(row.last_error_code),
    lastErrorMessage: strOrNull(row.last_error_message),
    receivedAt: num(row.received_at),
    handledAt: numOrNull(row.handled_at),
  };
}

function bytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError('inbox: the body column did not come back as bytes');
}

export function toDetail(row: DbRow): InboxRowDetail {
  return {
    ...toRow(row),
    headers: JSON.parse(String(row.headers)) as Record<string, string>,
    body: bytes(row.body),
  };
}

/** The hand-off job a row stores: the worker runs it with `receiver.runJob`, which checks its MAC. */
export function jobOf(row: DbRow): HandoffJob {
  const job: HandoffJob = {
    v: HANDOFF_JOB_VERSION,
    service: String(row.service),
    deliveryId: String(row.delivery_id),
    event: String(row.event),
    dedupKey: String(row.dedup_key),
    receivedAt: num(row.received_at),
    secretIndex: num(row.secret_index),
    headers: JSON.parse(String(row.headers)) as Record<string, string>,
    body: toBase64(bytes(row.body)),
    mac: String(row.mac),
  };
  if (row.traceparent !== null && row.traceparent !== undefined) job.traceparent = String(row.traceparent);
  return job;
}
