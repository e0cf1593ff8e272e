import type { Clock } from '../shared/clock.js';
/**
 * What a client reports before it waits for a rate-limit window (a 429, or a response that said
 * `X-RateLimit-Remaining: 0`).
 *
 * @example
 * ```ts
 * createMailClient({ baseUrl, apiKey, onRateLimit: (w: RateLimitWait) => console.log(`waiting ${w.waitMs} ms`) });
 * ```
 *
 * @example
 * ```ts
 * import type { RateLimitWait } from '@svc/webhooks/manage';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: RateLimitWait): RateLimitWait {
 *   return value;
 * }
 * ```
 */
export interface RateLimitWait {
  method: string;
  path: string;
  /** How long the client waits before the next call. */
  waitMs: number;
  /** `'429'`: the service refused the call; `'remaining'`: the previous answer said none were left. */
  reason: '429' | 'remaining';
  /** 1 for the first retry of this call after a 429, then 2, 3… (0 for `'remaining'`). */
  retry: number;
}

/**
 * Options every management client accepts (transport, timeouts, rate-limit backoff).
 *
 * @example
 * ```ts
 * const options: HttpClientOptions = { baseUrl: 'https://api.svcmail.example', requestTimeoutMs: 10_000, maxRetries: 5 };
 * ```
 *
 * @example
 * ```ts
 * import type { HttpClientOptions } from '@svc/webhooks/manage';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: HttpClientOptions): HttpClientOptions {
 *   return value;
 * }
 * ```
 */
export interface HttpClientOptions {
  /** The service's base address (`{base_url}` in the specs), without the `/api/v1` or `/v1` prefix. */
  baseUrl: string;
  /** The fetch to call. Default `globalThis.fetch` (looked up at each call, so msw and test doubles apply). */
  fetch?: typeof fetch;
  /** Per-attempt timeout in ms; over it the call fails with `request_timeout`. Default 30 000. */
  requestTimeoutMs?: number;
  /** The largest answer body read, in bytes; a larger one is `response_invalid`. Default 16 MiB. */
  maxResponseBytes?: number;
  /** Retries of one call after `429` answers. Default 3; 0 fails at the first 429. */
  maxRetries?: number;
  /**
   * The longest single wait for a rate-limit window, in ms. A 429 whose reset is further away fails
   * at once with `rate_limited` (carrying `resetAt`) instead of blocking. Default 60 000.
   */
  maxRetryWaitMs?: number;
  /** Wait when an answer said `X-RateLimit-Remaining: 0`, so the next call is not refused. Default true. */
  respectRemaining?: boolean;
  /** Time and sleep. Default the wall clock and `setTimeout`. */
  clock?: Clock;
  /** Called before every rate-limit wait. */
  onRateLimit?: (wait: RateLimitWait) => void;
  /** Extra headers on every call (a `User-Agent`, a tracing header…). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * Per-call options of every client method.
 *
 * @example
 * ```ts
 * await client.listWebhooks({ signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface CallOptions {
  /** Aborts the call (and any rate-limit wait); the call rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Overrides the client's `requestTimeoutMs` for this call. */
  requestTimeoutMs?: number;
}
