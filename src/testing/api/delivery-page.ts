import { WebhookError } from '../../shared/errors.js';
import type { EmittedAttempt } from '../emitter/types.js';

/**
 * The deliveries answer: `{ data, next_cursor }`, newest first. The spec shows no query parameters
 * (email-service §4); ours are `since` (ISO time, attempts at or after it), `success` (`true`/`false`),
 * `limit` (1–500; without it every record in one page) and `cursor` (the previous page's `next_cursor`).
 */
export function deliveryPage(
  attempts: EmittedAttempt[],
  query: URLSearchParams,
): { data: EmittedAttempt[]; next_cursor: string | null } {
  const since = query.get('since');
  const sinceMs = since === null ? null : Date.parse(since);
  if (sinceMs !== null && Number.isNaN(sinceMs)) {
    throw new WebhookError('invalid_payload', 'since must be an ISO 8601 time.');
  }
  const success = query.get('success');
  if (success !== null && success !== 'true' && success !== 'false') {
    throw new WebhookError('invalid_payload', 'success must be true or false.');
  }
  const limitText = query.get('limit');
  const limit = limitText === null ? null : Number(limitText);
  if (limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > 500)) {
    throw new WebhookError('invalid_payload', 'limit must be a whole number from 1 to 500.');
  }
  const cursor = query.get('cursor');
  const offset = cursor === null ? 0 : Number(/^o(\d+)$/.exec(cursor)?.[1] ?? Number.NaN);
  if (Number.isNaN(offset)) throw new WebhookError('invalid_payload', 'cursor is not one this API gave.');
  const matching = attempts.filter(
    (a) =>
      (sinceMs === null || Date.parse(a.attemptedAt) >= sinceMs) &&
      (success === null || a.success === (success === 'true')),
  );
  const end = limit === null ? matching.length : offset + limit;
  return { data: matching.slice(offset, end), next_cursor: end < matching.length ? `o${end}` : null };
}
