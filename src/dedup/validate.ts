import { WebhookError } from '../shared/errors.js';

/**
 * Argument checks shared by the stores. A bad key or duration is a programming error in the caller
 * (a receiver misconfiguration), so it is reported as `options_invalid` (500) with the fix in the message.
 */

/**
 * Longest key every store accepts, in characters: at most 1,536 UTF-8 bytes, well under Postgres'
 * btree limit of about 2.7 KB per index entry, past which every claim of the key would fail (503)
 * forever. The receivers never come near it: they hash keys longer than `DEDUP_KEY_HASH_ABOVE`.
 */
export const MAX_DEDUP_KEY_LENGTH = 512;

/**
 * Throws unless `key` is a non-empty string of at most {@link MAX_DEDUP_KEY_LENGTH} characters,
 * without U+0000 (Postgres text cannot hold it: every claim of the key would fail, 503, forever).
 */
export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new WebhookError('options_invalid', 'Dedup key must be a non-empty string.');
  }
  if (key.length > MAX_DEDUP_KEY_LENGTH) {
    // The same answer on every store, before a backend refuses it in its own way (Postgres: an index
    // row size error on each claim). The key itself is not echoed: it may come from a sender.
    throw new WebhookError(
      'options_invalid',
      `Dedup key has ${key.length} characters; stores accept at most ${MAX_DEDUP_KEY_LENGTH}. Shorten it or hash it (boundDedupKey).`,
    );
  }
  if (key.includes('\u0000')) {
    throw new WebhookError(
      'options_invalid',
      'Dedup key contains U+0000, which stores do not accept (Postgres text cannot hold it). Hash it (boundDedupKey), as the receivers do.',
    );
  }
}

/** Throws unless `token` is a non-empty string. */
export function assertToken(token: unknown): asserts token is string {
  if (typeof token !== 'string' || token.length === 0) {
    throw new WebhookError(
      'options_invalid',
      'Fencing token must be the non-empty string returned by claim().',
    );
  }
}

/** Throws unless `value` is a positive whole number of milliseconds. */
export function assertMs(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new WebhookError('options_invalid', `${name} must be a positive whole number of milliseconds.`);
  }
}
