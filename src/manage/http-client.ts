import { sleepOn, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { errorFromResponse } from './api-error.js';
import { fetchOnce } from './fetch-once.js';
import type { CallOptions, HttpClientOptions } from './http-types.js';
import { rateLimitRemaining, rateLimitResetAt, retryAt } from './rate-limit-headers.js';

/** A query string value; `undefined` leaves the parameter out. */
export type QueryValue = string | number | boolean | undefined;

/** One call of {@link createHttpClient}'s `request`. */
export interface CallInit extends CallOptions {
  query?: Readonly<Record<string, QueryValue>>;
  body?: unknown;
}

/**
 * The transport every management client shares: fetch with a per-attempt timeout and the caller's
 * `AbortSignal`, JSON in and out, non-2xx answers as {@link WebhookError}, and rate-limit handling:
 * a 429 is retried after `Retry-After` / `X-RateLimit-Reset` (the later of the two, capped by
 * `maxRetryWaitMs`), and an answer saying `X-RateLimit-Remaining: 0` makes the next call wait for the
 * window instead of being refused.
 */
export function createHttpClient(
  service: 'email' | 'CRM',
  options: HttpClientOptions & { auth: Readonly<Record<string, string>> },
) {
  const {
    baseUrl,
    fetch: fetchImpl,
    requestTimeoutMs: defaultTimeoutMs = 30_000,
    maxResponseBytes = 16 * 1024 * 1024,
    maxRetries = 3,
    maxRetryWaitMs = 60_000,
    respectRemaining = true,
    clock = systemClock,
    onRateLimit,
    headers: extraHeaders = {},
    auth,
  } = options;
  if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl)) {
    throw new WebhookError('options_invalid', `baseUrl must be an http(s) URL of the ${service} API.`);
  }
  const root = baseUrl.replace(/\/+$/, '');
  // Epoch ms until which the window is used up (the last answer said Remaining: 0).
  let exhaustedUntil: number | null = null;

  function urlOf(path: string, query: CallInit['query']): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const search = params.toString();
    return `${root}${path}${search ? `?${search}` : ''}`;
  }

  function parse(text: string, method: string, path: string): unknown {
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new WebhookError(
        'response_invalid',
        `The ${service} API answered ${method} ${path} with a body that is not JSON.`,
        { cause: error },
      );
    }
  }

  async function waitForWindow(method: string, path: string, signal: AbortSignal | undefined) {
    if (!respectRemaining || exhaustedUntil === null) return;
    const waitMs = exhaustedUntil - clock.now();
    exhaustedUntil = null;
    // Above the cap the call goes out anyway: a 429 then fails it with the reset time.
    if (waitMs <= 0 || waitMs > maxRetryWaitMs) return;
    onRateLimit?.({ method, path, waitMs, reason: 'remaining', retry: 0 });
    await sleepOn(clock, waitMs, signal);
  }

  /** Sends one call, retrying 429s; resolves the parsed JSON body (undefined when empty). */
  async function request<T = unknown>(method: string, path: string, init: CallInit = {}): Promise<T> {
    const { query, body, ...call } = init;
    if (call.signal?.aborted) throw call.signal.reason;
    const url = urlOf(path, query);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    await waitForWindow(method, path, call.signal);
    for (let retry = 0; ; retry++) {
      const { response, text } = await fetchOnce({
        service,
        fetch: fetchImpl,
        method,
        path,
        url,
        headers: {
          Accept: 'application/json',
          ...(payload === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...extraHeaders,
          ...auth,
        },
        body: payload,
        signal: call.signal,
        requestTimeoutMs: call.requestTimeoutMs ?? defaultTimeoutMs,
        maxResponseBytes,
      });
      const now = clock.now();
      const remaining = rateLimitRemaining(response.headers);
      exhaustedUntil = remaining === 0 ? rateLimitResetAt(response.headers, now) : null;
      if (response.status === 429) {
        // email-service §8 does not say how long to wait without headers: back off 1 s, 2 s, 4 s…
        // A reset already past (clock skew, whole seconds) would retry at once: back off instead.
        const announced = retryAt(response.headers, now);
        const at = announced !== null && announced > now ? announced : now + 1000 * 2 ** retry;
        const waitMs = at - now;
        if (retry >= maxRetries || waitMs > maxRetryWaitMs) {
          throw errorFromResponse(service, { method, path }, 429, safeParse(text), at);
        }
        exhaustedUntil = null;
        onRateLimit?.({ method, path, waitMs, reason: '429', retry: retry + 1 });
        await sleepOn(clock, waitMs, call.signal);
        continue;
      }
      if (!response.ok) {
        throw errorFromResponse(service, { method, path }, response.status, safeParse(text), null);
      }
      return parse(text, method, path) as T;
    }
  }

  return { request };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The transport of a management client.
 *
 * @example
 * ```ts
 * const http: HttpClient = createHttpClient('email', { baseUrl, auth: { 'X-API-Key': key } });
 * ```
 */
export type HttpClient = ReturnType<typeof createHttpClient>;
