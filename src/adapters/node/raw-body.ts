import type { IncomingMessage } from 'node:http';
import { bodyTooLarge, DEFAULT_BODY_TIMEOUT_MS } from '../../core/read-body.js';
import { WebhookError } from '../../shared/errors.js';
import { readNodeBody } from './read-body.js';

/**
 * A Node request as frameworks hand it over: maybe with a body a parser already produced
 * (`express.raw()` leaves a `Buffer` in `body`; a `verify` hook can keep one in `rawBody`).
 *
 * @example
 * ```ts
 * import type { NodeRequestLike } from '@svc/webhooks/node';
 *
 * const keep = (req: NodeRequestLike, _res: unknown, buf: Buffer) => { req.rawBody = buf; };
 * ```
 */
export type NodeRequestLike = IncomingMessage & { body?: unknown; rawBody?: unknown };

/**
 * The exact body bytes of a Node request however the app is set up: `req.rawBody` kept by a body
 * parser's `verify` hook, a `Buffer` left in `req.body` by `express.raw()`, or the unread stream
 * (size-capped and time-limited, see {@link readNodeBody}). A body a parser already turned into an
 * object or a string is never re-serialised (that changes bytes, and the signature with them): it
 * rejects with `raw_body_unavailable`, whose message (sent to the sender) is generic and whose `cause`
 * names `fix` (for the app's own log: `receiver.reject()` logs it).
 *
 * @example
 * ```ts
 * import { readRawBody } from '@svc/webhooks/node';
 *
 * const bytes = await readRawBody(req, receiver.maxBodyBytes, 'Mount the route before express.json().');
 * ```
 */
export function readRawBody(
  req: NodeRequestLike,
  maxBodyBytes: number,
  fix: string,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array> {
  const kept = req.rawBody instanceof Uint8Array ? req.rawBody : req.body;
  if (kept instanceof Uint8Array) {
    if (kept.byteLength > maxBodyBytes) {
      return Promise.reject(bodyTooLarge(maxBodyBytes));
    }
    return Promise.resolve(kept);
  }
  // A parser that skipped this request (other content type, no body) left the stream unread.
  if (!req.readableEnded && !req.destroyed) return readNodeBody(req, maxBodyBytes, timeoutMs);
  // The fix is for whoever runs the receiver, not for the sender: it goes to the log via `cause`.
  return Promise.reject(
    new WebhookError(
      'raw_body_unavailable',
      'The receiver could not read the raw request body; its log names the configuration to fix.',
      {
        cause: new Error(
          `A body parser consumed the request before the webhook route and kept no raw bytes, so the signature cannot be checked. ${fix}`,
        ),
      },
    ),
  );
}
