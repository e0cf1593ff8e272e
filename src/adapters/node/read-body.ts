import type { IncomingMessage } from 'node:http';
import { bodyTimeout, bodyTooLarge, DEFAULT_BODY_TIMEOUT_MS } from '../../shared/body-errors.js';
import { systemClock } from '../../shared/clock.js';
import { WebhookError } from '../../shared/errors.js';
import { Scheduler, TimeoutEntry } from '../../shared/scheduler.js';

/**
 * The body deadlines of every read in this process, on one unref'd timer: a runtime timer set and
 * cleared per request cost more than the rest of the read (docs/benchmarks.md). Nothing is armed
 * until the first read.
 */
const deadlines = new Scheduler(systemClock);

/** The same timer, for the Hono adapter's read on @hono/node-server (src/adapters/hono/node-server-body.ts). */
export { deadlines as bodyDeadlines };

/**
 * Reads a Node request stream into one `Uint8Array`, stopping past `maxBodyBytes` or `timeoutMs`. A
 * declared `Content-Length` over the limit is refused before a single byte is read; a stream that
 * grows past it is paused and left unread, so an oversized upload is never buffered. A body still
 * incomplete after `timeoutMs` (default 5 000; a slow-loris client) rejects with `body_timeout`, and
 * a client that disconnects or errors mid-body with `body_unreadable`: the promise never stays pending.
 *
 * @example
 * ```ts
 * import { readNodeBody } from '@svc/webhooks/node';
 *
 * const bytes = await readNodeBody(req, 1024 * 1024, 5_000); // rejects with WebhookError body_too_large / body_timeout
 * ```
 */
export function readNodeBody(
  req: IncomingMessage,
  maxBodyBytes: number,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array> {
  const declared = req.headers?.['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    return Promise.reject(bodyTooLarge(maxBodyBytes));
  }
  if (req.readableEnded || req.destroyed) {
    return Promise.reject(
      new WebhookError('body_unreadable', 'The request body stream was already consumed or closed.'),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      deadlines.remove(deadline);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    // Stop here: the rest of the upload is never read into memory; the caller answers and cuts.
    const stop = (error: WebhookError) => {
      cleanup();
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) return stop(bodyTooLarge(maxBodyBytes));
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (cause: unknown) => {
      cleanup();
      reject(new WebhookError('body_unreadable', 'The request body could not be read.', { cause }));
    };
    const onClose = () => {
      cleanup();
      reject(
        new WebhookError('body_unreadable', 'The client closed the connection before the body was complete.'),
      );
    };
    // A whole-body deadline, not an idle one: a client trickling a byte a second never goes idle.
    const deadline = new TimeoutEntry(() => stop(bodyTimeout(timeoutMs)));
    deadlines.add(deadline, systemClock.now() + timeoutMs);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}
