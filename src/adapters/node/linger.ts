import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * How much of an unread upload is discarded after answering before the connection is cut. Discarding
 * costs no memory; the cap bounds wasted bandwidth. Time is the main limit: a busy client may take a
 * while to read the answer, and a small byte cap reached in a few milliseconds on a fast link would
 * cut it before it had (a reset then destroys the answer in flight).
 */
const LINGER_BYTES = 16 * 1_048_576;
/** How long the client gets to read the answer before the connection is cut. */
const LINGER_MS = 2_000;

/**
 * For a request answered before its body was read (413): let the client read the answer, then cut
 * the connection. Closing at once with unread bytes in the socket makes the kernel send a reset,
 * which can destroy the answer in flight; draining the whole upload would read what we refused.
 * So the rest is discarded for a moment (Node dumps it after `finish`), never buffered, and the
 * socket is destroyed past {@link LINGER_BYTES} or {@link LINGER_MS}, or kept if the upload ends.
 */
export function lingerThenClose(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.readableEnded) return;
    const cut = () => {
      clearTimeout(timer);
      req.socket?.destroy();
    };
    const timer = setTimeout(cut, LINGER_MS);
    timer.unref();
    let discarded = 0;
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) cut();
    });
    req.once('end', () => clearTimeout(timer));
    req.resume();
  });
}
