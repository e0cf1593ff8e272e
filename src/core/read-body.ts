/**
 * Reading a web `Request`'s body with a size cap: a declared `Content-Length` above the cap is refused
 * before reading, and a stream that grows past it is cancelled at once (never buffered whole).
 */
import { WebhookError } from './errors.js';

/** The `body_too_large` error of a receiver whose limit is `maxBodyBytes`. */
export function bodyTooLarge(maxBodyBytes: number): WebhookError {
  return new WebhookError(
    'body_too_large',
    `The body exceeds this receiver's limit of ${maxBodyBytes} bytes (option maxBodyBytes).`,
  );
}

function unreadable(cause: unknown): WebhookError {
  return new WebhookError('body_unreadable', 'The request body could not be read to its end.', { cause });
}

/** The declared length, or -1 when absent or not a plain decimal number. */
function declaredLength(request: Request): number {
  const value = request.headers.get('content-length');
  if (value === null || !/^\d{1,15}$/.test(value)) return -1;
  return Number(value);
}

/**
 * The exact body bytes of `request`, or the error to answer with (`body_too_large`,
 * `body_unreadable`). Never rejects.
 */
export async function readRequestBody(
  request: Request,
  maxBodyBytes: number,
): Promise<Uint8Array | WebhookError> {
  const declared = declaredLength(request);
  if (declared > maxBodyBytes) {
    // Refuse without reading; cancelling tells the server not to wait for the rest.
    request.body?.cancel().catch(() => {});
    return bodyTooLarge(maxBodyBytes);
  }
  const stream = request.body;
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  // One allocation when the length is declared; chunks are collected otherwise.
  let buffer = declared >= 0 ? new Uint8Array(declared) : null;
  let chunks: Uint8Array[] | null = buffer ? null : [];
  let length = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (length + value.byteLength > maxBodyBytes) {
        reader.cancel().catch(() => {});
        return bodyTooLarge(maxBodyBytes);
      }
      if (buffer && length + value.byteLength <= buffer.byteLength) {
        buffer.set(value, length);
      } else {
        // More bytes than declared (a synthetic Request): fall back to collecting chunks.
        if (!chunks) chunks = buffer ? [buffer.subarray(0, length)] : [];
        buffer = null;
        chunks.push(value);
      }
      length += value.byteLength;
    }
  } catch (error) {
    return unreadable(error);
  } finally {
    reader.releaseLock();
  }
  if (buffer) return length === buffer.byteLength ? buffer : buffer.subarray(0, length);
  return concat(chunks ?? [], length);
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
