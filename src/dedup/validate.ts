import { WebhookError } from '../core/errors.js';

/**
 * Argument checks shared by the stores. A bad key or duration is a programming error in the caller
 * (a receiver misconfiguration), so it is reported as `options_invalid` (500) with the fix in the message.
 */

/** Throws unless `key` is a non-empty string. */
export function assertKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new WebhookError('options_invalid', 'Dedup key must be a non-empty string.');
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
