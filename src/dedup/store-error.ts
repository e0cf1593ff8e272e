import { isWebhookError, WebhookError } from '../shared/errors.js';
import type { StoreCallOptions } from './types.js';

/**
 * Failures of a shared store: the receiver must fail closed (503, the sender retries), so every
 * client error becomes `store_unavailable`. The client's own message goes to `cause` only: it can
 * name hosts or users, and error bodies must stay small and secret-free. `what` names the store's
 * kind in the message: `'dedup store'`, or `'inbox'` for the database inbox.
 */
export function storeUnavailable(store: string, cause: unknown, what = 'dedup store'): WebhookError {
  if (isWebhookError(cause)) return cause;
  return new WebhookError(
    'store_unavailable',
    `The ${store} ${what} did not answer; the delivery was not processed and the sender will retry.`,
    { cause },
  );
}

/**
 * Settles with `promise`, or rejects with `store_unavailable` after `timeoutMs` (0 = no limit), so a
 * store that hangs never holds a delivery past the sender's 10-second limit (email-service §8, crm-service §8).
 */
export function withTimeout<T>(
  promise: Promise<T>,
  timeoutMs: number,
  store: string,
  what?: string,
): Promise<T> {
  if (timeoutMs <= 0) return promise;
  // One promise and one timer per call (no race, no finally): it is on every store call's path.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(storeUnavailable(store, new Error(`no answer within ${timeoutMs} ms`), what)),
      timeoutMs,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * The time bound of one store call: the call's own `callTimeoutMs` when it has one (a receiver passes the
 * deadline it owns), otherwise the store's `fallback` (calls made directly by user code).
 */
export function callTimeout(options: StoreCallOptions | undefined, fallback: number): number {
  const callTimeoutMs = options?.callTimeoutMs;
  if (callTimeoutMs === undefined) return fallback;
  if (typeof callTimeoutMs !== 'number' || !Number.isFinite(callTimeoutMs) || callTimeoutMs < 0) {
    throw new WebhookError(
      'options_invalid',
      'callTimeoutMs must be a non-negative number of milliseconds (0: no bound).',
    );
  }
  return callTimeoutMs;
}
