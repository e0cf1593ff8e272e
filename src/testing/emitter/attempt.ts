import type { SchedulerClock } from '../clock/types.js';

/**
 * An in-process receiver: the web-standard handler of a receiver or an app, called without a network.
 *
 * @example
 * ```ts
 * const handler: InProcessHandler = (request) => receiver.handle(request);
 * const emitter = createMailEmitter({ handler });
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
  clock: SchedulerClock,
  transport: TransportOptions,
  url: string,
  headers: Record<string, string>,
  // The body as text: its UTF-8 encoding is the exact bytes signed, and undici copies strings faster.
  body: string,
): Promise<AttemptOutcome> {
  const { handler, attemptTimeoutMs = 10_000 } = transport;
  const startedAt = clock.now();
  const wallStart = performance.now();
  const finish = (statusCode: number, error: string | null, responseBody: string | null): AttemptOutcome => ({
    statusCode,
    // Virtual time for in-process waits, wall time for real I/O; whichever actually elapsed.
    durationMs: Math.max(clock.now() - startedAt, Math.round(performance.now() - wallStart)),
    error,
    responseBody,
  });
  const controller = new AbortController();
  let timer: number | undefined;
  try {
    const response = handler
      ? await new Promise<[number, string | null]>((resolve, reject) => {
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
          Promise.resolve()
            .then(() => handler(request))
            .then(readBody)
            .then(resolve, reject);
        })
      : await callFetch(transport.fetch ?? globalThis.fetch, url, headers, body, attemptTimeoutMs);
    const [status, text] = response;
    if (status >= 200 && status < 300) return finish(status, null, text);
    const error = status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`;
    return finish(status, error, text);
  } catch (error) {
    return finish(0, describeError(error), null);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}

async function readBody(response: Response): Promise<[number, string | null]> {
  if (response.body === null) return [response.status, null];
  const text = await response.text().catch(() => '');
  return [response.status, text.length === 0 ? null : text.slice(0, MAX_BODY_TEXT)];
}

async function callFetch(
  fetchImpl: typeof fetch,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<[number, string | null]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const response = await fetchImpl(url, { method: 'POST', headers, body, redirect: 'manual', signal });
  return readBody(response);
}
