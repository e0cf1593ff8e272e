/**
 * @module
 * `@svc/webhooks/nest`: a receiver behind a NestJS controller route (platform-express), and the body
 * reader that applies the receiver's limits ahead of Nest's body parsers.
 */
import type { ServerResponse } from 'node:http';
import { bodyLimitsOf } from '../receiver/body-limits.js';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { httpAnswer } from '../receiver/http-answer.js';
import { handleNodeRequest, type NodeRequestLike, writeAnswer } from './node/handle-request.js';
import { lingerThenClose } from './node/linger.js';
import { readNodeBody } from './node/read-body.js';

// Logged with the 500 raw_body_unavailable when Nest's body parser kept no raw bytes.
const FIX =
  'Create the Nest app with NestFactory.create(AppModule, { rawBody: true }) and mount ' +
  "createNestBodyReader(receiver) on the webhook path with app.use() before app.listen(): the receiver's " +
  'limits then apply (or pass { bodyParser: false } to leave the body unread).';

/**
 * A function a Nest controller route calls with the request and response it gets from `@Req()` and
 * `@Res()` (Express's, which extend Node's): it answers the delivery itself. The bytes come from
 * {@link createNestBodyReader} (or `req.rawBody`, which Nest keeps when the app is created with
 * `rawBody: true`), or from the stream when no parser read it (`bodyParser: false`, or a content type
 * Nest's parsers skip). Without either, the request is refused with 500 `raw_body_unavailable`, the
 * fix in the receiver's log. The handlers' `signal` aborts if the sender disconnects.
 *
 * @example
 * ```ts
 * import { NestFactory } from '@nestjs/core';
 * import { createNestHandler } from '@svc/webhooks/nest';
 *
 * const app = await NestFactory.create(AppModule, { rawBody: true });
 * // In a controller: @Post('mail') mail(@Req() req: Request, @Res() res: Response) { return this.mail(req, res); }
 * const handleMail = createNestHandler(mailReceiver);
 * ```
 */
export function createNestHandler(
  receiver: WebhookReceiverLike,
): (req: NodeRequestLike, res: ServerResponse) => Promise<void> {
  return (req, res) => handleNodeRequest(receiver, req, res, FIX);
}

/**
 * Express-style middleware for `app.use(path, …)` before `app.listen()`, so it runs ahead of Nest's
 * body parsers: it reads a POST body within `receiver`'s `maxBodyBytes` and `bodyTimeoutMs` and keeps
 * it in `req.rawBody` (Nest's parsers then skip the finished request, and {@link createNestHandler}
 * verifies those bytes). A body too large (a declared `Content-Length` at once), too slow or cut off
 * is answered there by the receiver (413, 408, 400) and the connection closed; no controller runs.
 * Nest's own parsers have no time limit, and with `rawBody: true` they read a webhook body first.
 *
 * @example
 * ```ts
 * import { NestFactory } from '@nestjs/core';
 * import { createNestBodyReader } from '@svc/webhooks/nest';
 *
 * const app = await NestFactory.create(AppModule, { rawBody: true });
 * app.use('/webhooks/mail', createNestBodyReader(app.get(WebhookReceivers).mail));
 * await app.listen(3000);
 * ```
 */
export function createNestBodyReader(
  receiver: WebhookReceiverLike,
): (req: NodeRequestLike, res: ServerResponse, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    if (req.method !== 'POST' || req.rawBody instanceof Uint8Array || req.readableEnded) return next();
    const { maxBodyBytes, bodyTimeoutMs } = bodyLimitsOf(receiver);
    readNodeBody(req, maxBodyBytes, bodyTimeoutMs).then(
      (bytes) => {
        req.rawBody = bytes;
        next();
      },
      async (error: unknown) => {
        // The receiver's own refusal (logged, counted), answered now; the rest of the upload is cut.
        const verdict = await receiver.receive({ body: () => Promise.reject(error), headers: req.headers });
        if (!req.readableEnded) lingerThenClose(req, res);
        writeAnswer(res, httpAnswer(verdict));
      },
    );
  };
}
