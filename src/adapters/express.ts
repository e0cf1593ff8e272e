/**
 * @module
 * `@svc/webhooks/express`: a receiver as Express 4 or 5 middleware, whatever body parsers the app uses.
 */
import type { ServerResponse } from 'node:http';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { handleNodeRequest, type NodeRequestLike } from './node/handle-request.js';

/**
 * Express middleware, typed structurally (`express` is not a dependency); Express's `Request` and
 * `Response` extend Node's, so it fits `app.post()` of Express 4 and 5.
 *
 * @example
 * ```ts
 * import type { ExpressWebhookMiddleware } from '@svc/webhooks/express';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: ExpressWebhookMiddleware): ExpressWebhookMiddleware {
 *   return value;
 * }
 * ```
 */
export type ExpressWebhookMiddleware = (
  req: NodeRequestLike,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

// Logged with the 500 raw_body_unavailable when a parser got to the body first.
const FIX =
  'Mount the webhook route before express.json()/express.urlencoded(), or give it express.raw({ type: "*/*" }), ' +
  'or keep the bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf; } }).';

/**
 * Express middleware (Express 4 and 5) that answers a webhook delivery. It hands the receiver the
 * exact bytes from `express.raw()`'s `Buffer` or from `req.rawBody` kept by `express.json({ verify })`,
 * or a reader of the stream when no parser ran (the receiver reads it within its `maxBodyBytes` and
 * `bodyTimeoutMs`). A body already parsed into an object is refused with 500 `raw_body_unavailable`
 * (the fix goes to the receiver's log), never re-serialised. The handlers' `signal` aborts if the
 * sender disconnects.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createExpressMiddleware } from '@svc/webhooks/express';
 *
 * const mail = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! })
 *   .on('delivered', async (event) => markDelivered(event.payload.message_id));
 *
 * const app = express();
 * // Before any app.use(express.json()): the signature is over the raw bytes.
 * app.post('/webhooks/mail', createExpressMiddleware(mail));
 * app.use(express.json());
 * ```
 */
export function createExpressMiddleware(receiver: WebhookReceiverLike): ExpressWebhookMiddleware {
  return (req, res, next) => {
    // Express 4 ignores returned promises; handleNodeRequest never rejects, the catch is a last guard.
    handleNodeRequest(receiver, req, res, FIX).catch(next);
  };
}
