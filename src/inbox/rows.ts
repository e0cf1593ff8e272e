/**
 * Database rows of the inbox table as {@link InboxRow}s, and a claimed row as the stored delivery it
 * runs again.
 * A row may hold what the inbox never writes (a hand edit, another program, a restored dump): it is
 * read anyway, field by field, and marked `malformed` with the reason, so one such row never fails a
 * listing; the worker moves it to `dead` (`job_invalid`) instead of running it.
 */
import type { SecretRequest } from '../core/route-secrets.js';
import type { StoredDelivery } from '../receiver/inbox-runs.js';
import { WebhookError } from '../shared/errors.js';
import type { DbRow } from './db.js';
import { INBOX_STATUSES, type InboxRow, type InboxRowDetail, type InboxStatus } from './types.js';

/** The largest epoch ms a `Date` holds (±100,000,000 days): a time column past it is no time. */
const MAX_TIME_MS = 8.64e15;

/** Reads one row's columns, collecting what is not what the inbox writes. */
class Reader {
  readonly problems: string[];
  private readonly row: DbRow;
  // Assigned here, not as field initializers: tsup's CommonJS pass wraps a class with those in a
  // renaming helper (test/package/error-name.test.ts).
  constructor(row: DbRow) {
    this.row = row;
    this.problems = [];
  }

  private bad(column: string, what: string): void {
    this.problems.push(`${column} is not ${what}`);
  }

  /** A whole number within `max` (PostgreSQL BIGINT comes as text, SQLite's as a bigint); NaN otherwise. */
  whole(column: string, what: string, min: number, max: number): number {
    const value = this.row[column];
    const n =
      typeof value === 'number' || typeof value === 'bigint'
        ? Number(value)
        : typeof value === 'string' && /^-?\d{1,20}$/.test(value)
          ? Number(value)
          : Number.NaN;
    if (Number.isSafeInteger(n) && n >= min && n <= max) return n;
    this.bad(column, what);
    return Number.isFinite(n) ? n : Number.NaN;
  }

  count(column: string): number {
    return this.whole(column, 'a count', 0, Number.MAX_SAFE_INTEGER);
  }

  time(column: string): number {
    return this.whole(column, 'a time in epoch ms', -MAX_TIME_MS, MAX_TIME_MS);
  }

  timeOrNull(column: string): number | null {
    const value = this.row[column];
    return value === null || value === undefined ? null : this.time(column);
  }

  text(column: string): string {
    const value = this.row[column];
    if (typeof value === 'string') return value;
    this.bad(column, 'text');
    return value === null || value === undefined ? '' : String(value);
  }

  textOrNull(column: string): string | null {
    const value = this.row[column];
    return value === null || value === undefined ? null : this.text(column);
  }

  status(): InboxStatus {
    const status = this.text('status');
    if (!INBOX_STATUSES.includes(status as InboxStatus)) this.bad('status', 'a status');
    return status as InboxStatus;
  }

  headers(): Record<string, string> {
    const text = this.text('headers');
    try {
      const parsed: unknown = JSON.parse(text);
      if (
        typeof parsed === 'object' &&
        parsed !== null &&
        !Array.isArray(parsed) &&
        Object.values(parsed).every((v) => typeof v === 'string')
      )
        return parsed as Record<string, string>;
    } catch {
      // reported below
    }
    this.bad('headers', 'a JSON object of strings');
    return {};
  }

  body(): Uint8Array {
    const value = this.row.body;
    if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    this.bad('body', 'bytes');
    return new TextEncoder().encode(typeof value === 'string' ? value : '');
  }

  /** The stored route (`{ path, params }` of strings), or null. */
  route(): SecretRequest | null {
    const text = this.textOrNull('route');
    if (text === null) return null;
    try {
      const parsed = JSON.parse(text) as { path?: unknown; params?: unknown };
      const { path, params } = parsed;
      if (
        typeof path === 'string' &&
        typeof params === 'object' &&
        params !== null &&
        !Array.isArray(params) &&
        Object.values(params).every((v) => typeof v === 'string')
      )
        return { path, params: params as Record<string, string> };
    } catch {
      // reported below
    }
    this.bad('route', 'a JSON route of strings');
    return null;
  }

  /** `fields` with `malformed` set when any column was not what the inbox writes. */
  done<T extends InboxRow>(fields: T): T {
    if (this.problems.length > 0) fields.malformed = `${this.problems.join('; ')}.`;
    return fields;
  }
}

function readRow(read: Reader): InboxRow {
  return {
    id: read.count('id'),
    dedupKey: read.text('dedup_key'),
    service: read.text('service'),
    event: read.text('event'),
    deliveryId: read.text('delivery_id'),
    eventAt: read.time('event_at'),
    orderingKey: read.textOrNull('ordering_key'),
    status: read.status(),
    attempts: read.count('attempts'),
    runAt: read.time('run_at'),
    leaseUntil: read.timeOrNull('lease_until'),
    fence: read.count('fence'),
    lastErrorCode: read.textOrNull('last_error_code'),
    lastErrorMessage: read.textOrNull('last_error_message'),
    receivedAt: read.time('received_at'),
    handledAt: read.timeOrNull('handled_at'),
  };
}

export function toRow(row: DbRow): InboxRow {
  const read = new Reader(row);
  return read.done(readRow(read));
}

export function toDetail(row: DbRow): InboxRowDetail {
  const read = new Reader(row);
  return read.done({ ...readRow(read), headers: read.headers(), body: read.body() });
}

/**
 * The delivery a claimed row stores, to run again: the worker hands it to `receiver.runJob`, which
 * verifies its stored signature again. Throws `job_invalid` for a malformed row (docs/inbox.md
 * "Malformed rows").
 */
export function storedOf(row: DbRow): StoredDelivery {
  const read = new Reader(row);
  readRow(read);
  const stored: StoredDelivery = {
    stored: 'inbox',
    service: read.text('service'),
    deliveryId: read.text('delivery_id'),
    event: read.text('event'),
    dedupKey: read.text('dedup_key'),
    receivedAt: read.time('received_at'),
    headers: read.headers(),
    route: read.route(),
    traceparent: read.textOrNull('traceparent'),
    body: read.body(),
  };
  if (read.problems.length > 0)
    throw new WebhookError(
      'job_invalid',
      `The inbox row is malformed (${[...new Set(read.problems)].join('; ')}): it was not written by a receiver, and it never runs.`,
    );
  return stored;
}
