/**
 * Reading a web `Request`'s body with a size cap and a time limit: a declared `Content-Length` above
 * the cap is refused before reading, a stream that grows past it is cancelled at once (never buffered
 * whole), and one that stalls is cancelled at the deadline.
 */
import { WebhookError } from '../shared/errors.js';

/**
 * Default `bodyTimeoutMs`, in ms. A delivery of a few KB arrives in milliseconds; a client still
 * sending after 5 s is stalled or hostile (slow-loris), and the senders give up at 10 s anyway
 * (email-service §6 rule 3, crm-service §6 rule 4), so holding the connection longer serves no one.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

/**
 * The `body_too_large` error of a receiver or adapter whose limit is `maxBodyBytes`: one wording
 * wherever the size is checked (the receiver, the fetch and Node readers, the Fastify parser).
 */
export function bodyTooLarge(maxBodyBytes: number, cause?: unknown): WebhookError {
  return new WebhookError(
    'body_too_large',
    `The body exceeds this receiver's limit of ${maxBodyBytes} bytes (option maxBodyBytes).`,
    cause === undefined ? {} : { cause },
  );
}

/** The `body_timeout` error of a receiver whose body deadline is `bodyTimeoutMs`. */
export function bodyTimeout(bodyTimeoutMs: number): WebhookError {
  return new WebhookError(
    'body_timeout',
    `The body did not arrive within ${bodyTimeoutMs} ms (option bodyTimeoutMs).`,
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
