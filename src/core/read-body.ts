/**
 * Reading a web `Request`'s body with a size cap and a time limit: a declared `Content-Length` above
 * the cap is refused before reading, a stream that grows past it is cancelled at once (never buffered
 * whole), and one that stalls is cancelled at the deadline.
 */
import { bodyTimeout, bodyTooLarge, DEFAULT_BODY_TIMEOUT_MS } from '../shared/body-errors.js';
import { WebhookError } from '../shared/errors.js';

function unreadable(cause: unknown): WebhookError {
  return new WebhookError('body_unreadable', 'The request body could not be read to its end.', { cause });
}

/** The declared length, or -1 when absent or not a plain decimal number. */
function declaredLength(request: Request): number {
  const value = request.headers.get('content-length');
  if (value === null || !/^\d{1,15}$/.test(value)) return -1;
  return Number(value);
}

const TIMED_OUT = Symbol('timed out');

/**
 * The exact body bytes of `request`, or the error to answer with (`body_too_large`, `body_timeout`,
 * `body_unreadable`). Never rejects. Memory grows with the bytes that arrived, never with the
 * declared `Content-Length` (a client may declare 1 MiB and send nothing).
 */
export async function readRequestBody(
  request: Request,
  maxBodyBytes: number,
  bodyTimeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array | WebhookError> {
  if (declaredLength(request) > maxBodyBytes) {
    // Refuse without reading; cancelling tells the server not to wait for the rest.
    request.body?.cancel().catch(() => {});
    return bodyTooLarge(maxBodyBytes);
  }
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, bodyTimeoutMs, TIMED_OUT);
  });
  // Chunks are kept as they arrive and joined once at the end (no copy for a one-chunk body).
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), deadline]);
      if (next === TIMED_OUT) {
        reader.cancel().catch(() => {});
        return bodyTimeout(bodyTimeoutMs);
      }
      const { done, value } = next;
      if (done) break;
      if (length + value.byteLength > maxBodyBytes) {
        reader.cancel().catch(() => {});
        return bodyTooLarge(maxBodyBytes);
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } catch (error) {
    return unreadable(error);
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  return concat(chunks, length);
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
