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

/** What a column holds: a whole number in a range, a time, text, or one of these or null. */
type Kind = 'count' | 'time' | 'text';

/**
 * The columns every row view reads, each with its kind and whether it may be null. One pass over
 * this list reads a row (no call per column: a worker reads every column of every row it runs).
 */
const COLUMNS: readonly (readonly [column: string, field: keyof InboxRow, kind: Kind, nullable: boolean])[] =
  [
    ['id', 'id', 'count', false],
    ['dedup_key', 'dedupKey', 'text', false],
    ['service', 'service', 'text', false],
    ['event', 'event', 'text', false],
    ['delivery_id', 'deliveryId', 'text', false],
    ['event_at', 'eventAt', 'time', false],
    ['ordering_key', 'orderingKey', 'text', true],
    ['status', 'status', 'text', false],
    ['attempts', 'attempts', 'count', false],
    ['run_at', 'runAt', 'time', false],
    ['lease_until', 'leaseUntil', 'time', true],
    ['fence', 'fence', 'count', false],
    ['last_error_code', 'lastErrorCode', 'text', true],
    ['last_error_message', 'lastErrorMessage', 'text', true],
    ['received_at', 'receivedAt', 'time', false],
    ['handled_at', 'handledAt', 'time', true],
  ];

const WHAT: Record<Kind, string> = { count: 'a count', time: 'a time in epoch ms', text: 'text' };

/**
 * The row's columns as an {@link InboxRow}, each problem (a column that is not what the inbox
 * writes) pushed on `problems`. A whole number within its range (PostgreSQL BIGINT comes as text,
 * SQLite's as a bigint), NaN when none; text as given, or its string form.
 */
function readRow(row: DbRow, problems: string[]): InboxRow {
  const fields: Record<string, unknown> = {};
  for (const [column, field, kind, nullable] of COLUMNS) {
    const value = row[column];
    if (nullable && (value === null || value === undefined)) {
      fields[field] = null;
      continue;
    }
    if (kind === 'text') {
      if (typeof value !== 'string') problems.push(`${column} is not text`);
      fields[field] =
        typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
      continue;
    }
    const n =
      typeof value === 'number' || typeof value === 'bigint'
        ? Number(value)
        : typeof value === 'string' && /^-?\d{1,20}$/.test(value)
          ? Number(value)
          : Number.NaN;
    const [min, max] = kind === 'count' ? [0, Number.MAX_SAFE_INTEGER] : [-MAX_TIME_MS, MAX_TIME_MS];
    if (!(Number.isSafeInteger(n) && n >= min && n <= max)) problems.push(`${column} is not ${WHAT[kind]}`);
    fields[field] = Number.isFinite(n) ? n : Number.NaN;
  }
  if (!INBOX_STATUSES.includes(fields.status as InboxStatus)) problems.push('status is not a status');
  return fields as unknown as InboxRow;
}

/** A JSON object of strings, or `undefined` when the text is not one. */
function stringsOf(text: string): Record<string, string> | undefined {
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
    // not JSON: undefined
  }
  return undefined;
}

/** The stored headers (a JSON object of strings). */
function headersOf(row: DbRow, problems: string[]): Record<string, string> {
  const text = row.headers;
  const headers = typeof text === 'string' ? stringsOf(text) : undefined;
  if (headers) return headers;
  if (typeof text !== 'string') problems.push('headers is not text');
  problems.push('headers is not a JSON object of strings');
  return {};
}

/** The stored body's bytes. */
function bodyOf(row: DbRow, problems: string[]): Uint8Array {
  const value = row.body;
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  problems.push('body is not bytes');
  return new TextEncoder().encode(typeof value === 'string' ? value : '');
}

/** The stored route (`{ path, params }` of strings), or null. */
function routeOf(row: DbRow, problems: string[]): SecretRequest | null {
  const text = row.route;
  if (text === null || text === undefined) return null;
  if (typeof text === 'string') {
    try {
      const { path, params } = JSON.parse(text) as { path?: unknown; params?: unknown };
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
  } else problems.push('route is not text');
  problems.push('route is not a JSON route of strings');
  return null;
}

/** `fields` with `malformed` set when any column was not what the inbox writes. */
function marked<T extends InboxRow>(fields: T, problems: string[]): T {
  if (problems.length > 0) fields.malformed = `${problems.join('; ')}.`;
  return fields;
}

export function toRow(row: DbRow): InboxRow {
  const problems: string[] = [];
  return marked(readRow(row, problems), problems);
}

export function toDetail(row: DbRow): InboxRowDetail {
  const problems: string[] = [];
  const fields = readRow(row, problems);
  return marked({ ...fields, headers: headersOf(row, problems), body: bodyOf(row, problems) }, problems);
}

/**
 * The delivery a claimed row stores, to run again: the worker hands it to `receiver.runJob`, which
 * verifies its stored signature again. Throws `job_invalid` for a malformed row (docs/inbox-operate.md
 * "Malformed rows").
 */
export function storedOf(row: DbRow): StoredDelivery {
  const problems: string[] = [];
  const fields = readRow(row, problems);
  const traceparent = row.traceparent;
  if (traceparent !== null && traceparent !== undefined && typeof traceparent !== 'string')
    problems.push('traceparent is not text');
  const stored: StoredDelivery = {
    stored: 'inbox',
    service: fields.service,
    deliveryId: fields.deliveryId,
    event: fields.event,
    dedupKey: fields.dedupKey,
    receivedAt: fields.receivedAt,
    headers: headersOf(row, problems),
    route: routeOf(row, problems),
    traceparent: traceparent === null || traceparent === undefined ? null : String(traceparent),
    body: bodyOf(row, problems),
  };
  if (problems.length > 0)
    throw new WebhookError(
      'job_invalid',
      `The inbox row is malformed (${[...new Set(problems)].join('; ')}): it was not written by a receiver, and it never runs.`,
    );
  return stored;
}
