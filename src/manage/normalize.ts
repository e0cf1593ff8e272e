import { WebhookError } from '../shared/errors.js';
import type { CrmDelivery } from './crm-types.js';
import type { MailDeliveryAttempt } from './mail-types.js';

// The specs do not show response bodies (email-service §4, crm-service §4), so answers are read
// leniently: lists as a bare array or under a common key, camelCase or snake_case field names, and
// unknown fields kept. Only what the client itself relies on is required.

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null;

function invalid(service: string, what: string): WebhookError {
  return new WebhookError('response_invalid', `The ${service} API answered with ${what}.`);
}

/** The array of a list answer: `[…]`, or `{ data | items | results | <key>: […] }`. */
export function listOf(body: unknown, service: string, key: string): Json[] {
  const list = Array.isArray(body)
    ? body
    : isRecord(body)
      ? [body.data, body.items, body.results, body[key]].find(Array.isArray)
      : undefined;
  if (!list) throw invalid(service, `no list of ${key}`);
  return list.filter(isRecord);
}

/** The cursor of the next page, when the answer has one. */
export function nextCursorOf(body: unknown): string | null {
  if (!isRecord(body)) return null;
  const raw = body.nextCursor ?? body.next_cursor ?? (isRecord(body.paging) ? body.paging.next : undefined);
  return typeof raw === 'string' && raw !== '' ? raw : null;
}

/** True for an object with a string `id`, bare or under `data`. */
export function isRecordWithId(body: unknown): boolean {
  const record = isRecord(body) && isRecord(body.data) && !('id' in body) ? body.data : body;
  return isRecord(record) && typeof record.id === 'string';
}

/** An object answer whose `id` is a string (webhooks, keys); snake_case timestamps get camelCase twins. */
export function recordOf<T>(body: unknown, service: string, what: string): T {
  const record = isRecord(body) && isRecord(body.data) && !('id' in body) ? body.data : body;
  if (!isRecord(record) || typeof record.id !== 'string') throw invalid(service, `no ${what} id`);
  return camel(record) as T;
}

const pick = (record: Json, ...names: string[]): unknown => {
  for (const name of names) if (record[name] !== undefined) return record[name];
  return undefined;
};

function camel(record: Json): Json {
  const out: Json = { ...record };
  for (const [name, value] of Object.entries(record)) {
    const camelName = name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (camelName !== name && out[camelName] === undefined) out[camelName] = value;
  }
  return out;
}

/** The record's own `success` flag, else whether its HTTP status was a 2xx. */
function successOf(record: Record<string, unknown>, statusCode: unknown): boolean {
  if (typeof record.success === 'boolean') return record.success;
  return typeof statusCode === 'number' && statusCode >= 200 && statusCode < 300;
}

/** An email attempt record with the fields recovery relies on, or null when it lacks them. */
export function mailAttemptOf(raw: Json): MailDeliveryAttempt | null {
  const record = camel(raw);
  const deliveryId = pick(record, 'deliveryId', 'id');
  const attemptedAt = pick(record, 'attemptedAt', 'createdAt', 'timestamp');
  if (typeof deliveryId !== 'string' || typeof attemptedAt !== 'string') return null;
  const statusCode = pick(record, 'statusCode', 'responseStatus', 'status');
  const success = successOf(record, statusCode);
  return {
    ...record,
    deliveryId,
    attemptedAt,
    success,
    ...(typeof statusCode === 'number' ? { statusCode } : {}),
  };
}

/** A CRM delivery record, or null when it has no id. */
export function crmDeliveryOf(raw: Json): CrmDelivery | null {
  const record = camel(raw);
  const id = pick(record, 'id', 'deliveryId');
  if (typeof id !== 'string') return null;
  const statusCode = pick(record, 'statusCode', 'httpStatus', 'responseStatus');
  const attempts = pick(record, 'attempts', 'attemptCount');
  const success = successOf(record, statusCode);
  return {
    ...record,
    id,
    success,
    ...(typeof statusCode === 'number' || statusCode === null ? { statusCode } : {}),
    ...(typeof attempts === 'number' ? { attempts } : {}),
  };
}

const MAX_DATE_MS = 8.64e15;

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Epoch ms of a point in time: epoch ms, a `Date`, an ISO 8601 string, or a duration before `now`
 * (`'30s'`, `'90m'`, `'2h'`, `'7d'`).
 */
export function toEpochMs(value: number | Date | string, now: number, name = 'since'): number {
  let ms = Number.NaN;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    const duration = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(value.trim());
    if (duration) ms = now - Number(duration[1]) * UNITS[duration[2]!]!;
    else if (/^\d{4}-\d{2}-\d{2}/.test(value)) ms = Date.parse(value);
  }
  // Only times a Date can hold (±8.64e15 ms): anything else would throw a RangeError as an ISO string.
  if (Math.abs(ms) <= MAX_DATE_MS) return ms;
  throw new WebhookError(
    'options_invalid',
    `${name} must be epoch ms, a Date, an ISO 8601 time or a duration such as '2h' or '7d'.`,
  );
}
