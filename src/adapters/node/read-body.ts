import type { IncomingMessage } from 'node:http';
import { WebhookError } from '../../core/errors.js';

/**
 * Reads a Node request stream into one `Uint8Array`, stopping past `maxBodyBytes`. A declared
 * `Content-Length` over the limit is refused before a single byte is read; a stream that grows past
 * it is paused and left unread, so an oversized upload is never buffered. A client that disconnects
 * or errors mid-body rejects with `body_unreadable` instead of leaving the promise pending.
 *
 * @example
 * ```ts
 * import { readNodeBody } from '@svc/webhooks/node';
 *
 * const bytes = await readNodeBody(req, 1024 * 1024); // rejects with WebhookError body_too_large
 * ```
 */
export function readNodeBody(req: IncomingMessage, maxBodyBytes: number): Promise<Uint8Array> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    return Promise.reject(tooLarge(maxBodyBytes));
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
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        // Stop here: the rest of the upload is never read into memory.
        cleanup();
        req.pause();
        reject(tooLarge(maxBodyBytes));
        return;
      }
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
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

function tooLarge(maxBodyBytes: number): WebhookError {
  return new WebhookError(
    'body_too_large',
    `The request body is larger than the limit of ${maxBodyBytes} bytes.`,
  );
}
