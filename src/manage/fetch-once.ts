import { WebhookError } from '../shared/errors.js';

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
  requestTimeoutMs: number;
  maxResponseBytes: number;
}

/**
 * Drops an unread body without waiting: a cancel the other side never settles (a stalled server, a
 * mock) must not hold the call past its answer.
 */
function discard(body: ReadableStream<Uint8Array> | null): void {
  void body?.cancel().catch(() => {});
}

/** The body as text, refused past `max` bytes (declared or streamed) so a runaway answer cannot fill memory. */
async function readText(response: Response, call: FetchOnce): Promise<string> {
  const tooLarge = (): WebhookError =>
    new WebhookError(
      'response_invalid',
      `The ${call.service} API answered ${call.method} ${call.path} with more than ${call.maxResponseBytes} bytes.`,
    );
  if (Number(response.headers.get('content-length')) > call.maxResponseBytes) {
    discard(response.body);
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > call.maxResponseBytes) {
      void reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * A 3xx is refused, never followed: a redirect would carry the credential, custom headers and the
 * body to whatever origin the Location names. The message names that origin (never the path or query,
 * which may carry tokens), or says it is the API's own.
 */
function redirectError(response: Response, call: FetchOnce): WebhookError {
  const said = `The ${call.service} API answered ${call.method} ${call.path} with`;
  // Edge runtimes hide a manual redirect's status and Location (an opaque-redirect response).
  if (response.type === 'opaqueredirect') {
    return new WebhookError('response_invalid', `${said} a redirect; redirects are not followed.`);
  }
  const raw = response.headers.get('location');
  let where: string;
  if (raw === null || raw.trim() === '') where = 'a redirect without a Location';
  else {
    try {
      const target = new URL(raw, call.url).origin;
      where =
        target === new URL(call.url).origin
          ? `a redirect to the same origin (${target})`
          : `a redirect to ${target}`;
    } catch {
      where = 'a redirect with an unreadable Location';
    }
  }
  return new WebhookError(
    'response_invalid',
    `${said} ${response.status}, ${where}; redirects are not followed, so the credential stays with the API's origin. Check baseUrl.`,
    { status: response.status },
  );
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.name : 'unknown error';
}

/**
 * Sends one call and reads its whole answer under `requestTimeoutMs` (a service that stalls mid-answer is a
 * timeout too). A redirect is `response_invalid`, never followed. The caller's abort rejects with `signal.reason`, as fetch does; the timeout is
 * `request_timeout`; no answer at all is `api_unavailable`.
 */
export async function fetchOnce(call: FetchOnce): Promise<{ response: Response; text: string }> {
  const { service, method, path, signal, requestTimeoutMs } = call;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, requestTimeoutMs);
  const onAbort = (): void => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Looked up at each call, so msw and test doubles installed later apply.
    const response = await (call.fetch ?? globalThis.fetch)(call.url, {
      method,
      headers: call.headers,
      ...(call.body === undefined ? {} : { body: call.body }),
      signal: controller.signal,
      redirect: 'manual',
    });
    if ((response.status >= 300 && response.status < 400) || response.type === 'opaqueredirect') {
      discard(response.body);
      throw redirectError(response, call);
    }
    // A custom fetch that follows redirects anyway: the answer is another origin's (or an unknown
    // path's), so it is not used.
    if (response.redirected) {
      discard(response.body);
      throw new WebhookError(
        'response_invalid',
        `The fetch given to the ${call.service} client followed a redirect for ${call.method} ${call.path}; redirects must not be followed (pass redirect through).`,
      );
    }
    return { response, text: await readText(response, call) };
  } catch (error) {
    if (error instanceof WebhookError) throw error;
    if (timedOut) {
      throw new WebhookError(
        'request_timeout',
        `The ${service} API did not answer ${method} ${path} within ${requestTimeoutMs} ms.`,
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
