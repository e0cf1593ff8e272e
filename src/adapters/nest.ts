/**
 * @module
 * `@svc/webhooks/nest`: a receiver behind a NestJS controller route (platform-express).
 */
import type { ServerResponse } from 'node:http';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { handleNodeRequest } from './node/handle-request.js';
import type { NodeRequestLike } from './node/raw-body.js';

// Logged with the 500 raw_body_unavailable when Nest's body parser kept no raw bytes.
const FIX =
  'Create the Nest app with NestFactory.create(AppModule, { rawBody: true }): Nest then keeps the exact ' +
  'bytes in req.rawBody next to the parsed body (or pass { bodyParser: false } to leave the body unread).';

/**
 * A function a Nest controller route calls with the request and response it gets from `@Req()` and
 * `@Res()` (Express's, which extend Node's): it answers the delivery itself. The bytes come from
 * `req.rawBody`, which Nest keeps when the app is created with `rawBody: true`, or from the stream
 * when no parser read it (`bodyParser: false`, or a content type Nest's parsers skip). Without
 * either, the request is refused with 500 `raw_body_unavailable`, the fix in the receiver's log. The
 * handlers' `signal` aborts if the sender disconnects.
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
