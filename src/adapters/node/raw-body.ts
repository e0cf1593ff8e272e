import type { IncomingMessage } from 'node:http';
import type { BodyLimits, BodyReader } from '../../core/receiver-types.js';
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
 * const hasRawBody = (req: NodeRequestLike) => req.rawBody instanceof Uint8Array;
 * ```
 */
export type NodeRequestLike = IncomingMessage & { body?: unknown; rawBody?: unknown };

/** The bytes a body parser kept (`req.rawBody` from a `verify` hook, `express.raw()`'s `req.body`). */
function keptBytes(req: NodeRequestLike): Uint8Array | undefined {
  const kept = req.rawBody instanceof Uint8Array ? req.rawBody : req.body;
  return kept instanceof Uint8Array ? kept : undefined;
}

function rawBodyUnavailable(fix: string): WebhookError {
  // The fix is for whoever runs the receiver, not for the sender: it goes to the log via `cause`.
  return new WebhookError(
    'raw_body_unavailable',
    'The receiver could not read the raw request body; its log names the configuration to fix.',
    {
      cause: new Error(
        `A body parser consumed the request before the webhook route and kept no raw bytes, so the signature cannot be checked. ${fix}`,
      ),
    },
  );
}

/**
 * `ReceiveInput.body` for a Node request: the bytes a parser kept, or a reader of the unread stream
 * the receiver calls with its limits, or a reader refusing with `raw_body_unavailable` (a parser
 * consumed the stream and kept no bytes; `fix` goes to the receiver's log).
 */
export function nodeBodyInput(req: NodeRequestLike, fix: string): Uint8Array | BodyReader {
  const kept = keptBytes(req);
  if (kept !== undefined) return kept;
  // A parser that skipped this request (other content type, no body) left the stream unread.
  if (!req.readableEnded && !req.destroyed) {
    return (limits: BodyLimits) => readNodeBody(req, limits.maxBodyBytes, limits.bodyTimeoutMs);
  }
  return () => Promise.reject(rawBodyUnavailable(fix));
}
