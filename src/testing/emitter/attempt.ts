import type { Clock } from '../../shared/clock.js';

/**
 * An in-process receiver: the web-standard handler of a receiver or an app, called without a network.
 *
 * @example
 * ```ts
 * const handler: InProcessHandler = (request) => receiver.handle(request);
 * const emitter = createMailEmitter({ handler });
 * ```
 *
 * @example
 * ```ts
 * import type { InProcessHandler } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: InProcessHandler): InProcessHandler {
 *   return value;
 * }
 * ```
 */
export type InProcessHandler = (request: Request) => Promise<Response> | Response;

/**
 * How an emitter reaches webhook URLs.
 *
 * @example
 * ```ts
 * createCrmEmitter({ allowPrivateNetworks: true, attemptTimeoutMs: 500 }); // real fetch, short limit
 * ```
 *
 * @example
 * ```ts
 * import type { TransportOptions } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: TransportOptions): TransportOptions {
 *   return value;
 * }
 * ```
 */
export interface TransportOptions {
  /**
   * Call this handler in-process instead of the network (no sockets; the 10 s limit runs on the
   * emitter's clock, so a handler that `await clock.sleep(11_000)` times out in virtual time).
   */
  handler?: InProcessHandler;
  /**
   * The fetch to use. Default: `globalThis.fetch`, looked up at every attempt (so msw, installed
   * after the emitter was created, still intercepts it). The 10 s limit is a real `AbortSignal`.
   */
  fetch?: typeof fetch;
  /** Per-attempt time limit in ms (email-service §8, crm-service §8: 10 seconds). Default 10_000. */
  attemptTimeoutMs?: number;
}

/** The raw outcome of one HTTP attempt. */
export interface AttemptOutcome {
  /** HTTP status, or 0 when no response arrived (network error, reset, timeout). */
  statusCode: number;
  durationMs: number;
  /** Why the attempt failed, or null on a 2xx. */
  error: string | null;
  /** The start of the response body (up to 1 KiB), for debugging. */
  responseBody: string | null;
}

const MAX_BODY_TEXT = 1024;

class AttemptTimeout extends Error {}

function describeError(error: unknown): string {
  if (error instanceof AttemptTimeout) return error.message;
  if (error instanceof Error) {
    const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
    const detail = cause && typeof cause === 'object' ? (cause.code ?? cause.message) : undefined;
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timeout: no response in time';
    return detail ? `${error.message} (${String(detail)})` : error.message;
  }
  return String(error);
}

/**
 * One attempt: POST `body` (UTF-8) with `headers` to `url`, `redirect: 'manual'` (email-service §6 rule 3,
 * crm-service §6 rule 4: redirects are not followed, so a 3xx is a failure), within the time limit.
 */
export async function performAttempt(
  clock: Required<Clock>,
  transport: TransportOptions,
  url: string,
  headers: Record<string, string>,
  // The body as text: its UTF-8 encoding is the exact bytes signed, and undici copies strings faster.
  body: string,
): Promise<AttemptOutcome> {
  const { handler, attemptTimeoutMs = 10_000 } = transport;
  const startedAt = clock.now();
  const wallStart = performance.now();
  let timer: unknown;
  let statusCode: number;
  let error: string | null;
  let responseBody: string | null;
  try {
    let response: ResponseText;
    if (handler) {
      const controller = new AbortController();
      response = await new Promise<ResponseText>((resolve, reject) => {
        timer = clock.setTimeout(() => {
          controller.abort();
          reject(new AttemptTimeout(`timeout: no response within ${attemptTimeoutMs} ms`));
        }, attemptTimeoutMs);
        const request = new Request(url, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: controller.signal,
        });
        // The handler runs on the next microtask, so a synchronous throw is a failed attempt too.
        Promise.resolve(request).then(handler).then(readBody).then(resolve, reject);
      });
    } else {
      response = await callFetch(transport.fetch ?? globalThis.fetch, url, headers, body, attemptTimeoutMs);
    }
    statusCode = response.status;
    responseBody = response.text;
    error =
      statusCode >= 200 && statusCode < 300
        ? null
        : statusCode >= 300 && statusCode < 400
          ? `redirect ${statusCode} not followed`
          : `HTTP ${statusCode}`;
  } catch (caught) {
    statusCode = 0;
    responseBody = null;
    error = describeError(caught);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
  return {
    statusCode,
    // In-process: the handler may wait on the emitter's (virtual) clock, so whichever elapsed. Over the
    // network the receiver runs in real time: wall time only, whatever the clock's speed (a scaled
    // clock, as the emulator's `--speed`, would multiply the duration).
    durationMs: handler
      ? Math.max(clock.now() - startedAt, Math.round(performance.now() - wallStart))
      : Math.round(performance.now() - wallStart),
    error,
    responseBody,
  };
}

/** Status and the start of the body of a response. */
interface ResponseText {
  status: number;
  text: string | null;
}

// Not async: a response without a body (the common case in-process) costs no extra promise.
function readBody(response: Response): ResponseText | Promise<ResponseText> {
  if (response.body === null) return { status: response.status, text: null };
  return response
    .text()
    .catch(() => '')
    .then((text) => ({
      status: response.status,
      text: text.length === 0 ? null : text.slice(0, MAX_BODY_TEXT),
    }));
}

async function callFetch(
  fetchImpl: typeof fetch,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<ResponseText> {
  const signal = AbortSignal.timeout(timeoutMs);
  // `headers` is shared by every attempt of a delivery: a custom fetch gets its own copy to change.
  const response = await fetchImpl(url, {
    method: 'POST',
    headers: { ...headers },
    body,
    redirect: 'manual',
    signal,
  });
  return readBody(response);
}
