import { WebhookError } from '../core/errors.js';

/** One HTTP call of a management client. */
export interface FetchOnce {
  service: string;
  fetch: typeof fetch | undefined;
  method: string;
  path: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.name : 'unknown error';
}

/**
 * Sends one call and reads its whole answer under `timeoutMs` (a service that stalls mid-answer is a
 * timeout too). The caller's abort rejects with `signal.reason`, as fetch does; the timeout is
 * `request_timeout`; no answer at all is `api_unavailable`.
 */
export async function fetchOnce(call: FetchOnce): Promise<{ response: Response; text: string }> {
  const { service, method, path, signal, timeoutMs } = call;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = (): void => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Looked up at each call, so msw and test doubles installed later apply.
    const response = await (call.fetch ?? globalThis.fetch)(call.url, {
      method,
      headers: call.headers,
      ...(call.body === undefined ? {} : { body: call.body }),
      signal: controller.signal,
    });
    return { response, text: await response.text() };
  } catch (error) {
    if (timedOut) {
      throw new WebhookError(
        'request_timeout',
        `The ${service} API did not answer ${method} ${path} within ${timeoutMs} ms.`,
        { cause: error },
      );
    }
    if (signal?.aborted) throw signal.reason;
    throw new WebhookError(
      'api_unavailable',
      `Could not reach the ${service} API for ${method} ${path} (${describe(error)}).`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
