/**
 * @module
 * `@svc/webhooks/koa`: receivers as Koa middleware, whatever body parser the app uses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Verdict } from '../core/verdict.js';
import { failed } from '../core/verdict.js';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { httpAnswer } from '../receiver/http-answer.js';
import { disconnectSignal } from './node/disconnect-signal.js';
import { nodeBodyInput } from './node/handle-request.js';
import { lingerThenClose } from './node/linger.js';
import { findReceiver, type WebhookRoutes } from './routes.js';

/**
 * What the middleware uses of a Koa context, typed structurally (`koa` is not a dependency): Node's
 * request and response, the path and method, what a body parser left on `ctx.request`, and the
 * response setters.
 *
 * @example
 * ```ts
 * import type { KoaContextLike } from '@svc/webhooks/koa';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: KoaContextLike): KoaContextLike {
 *   return value;
 * }
 * ```
 */
export type KoaContextLike = {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  method: string;
  request: { req: IncomingMessage; body?: unknown; rawBody?: unknown };
  status: number;
  body: unknown;
  set(fields: Record<string, string>): void;
};

// Logged with the 500 raw_body_unavailable when a body parser ran before the webhook middleware.
const FIX =
  'Register the webhook middleware before the body parser: app.use(createKoaMiddleware(routes)) first, ' +
  'then app.use(bodyParser()). The rawBody that koa-bodyparser and @koa/bodyparser keep is decoded text, ' +
  'not the bytes the signature is over, so it is not used.';

/** Exact bytes a raw-body parser left on `ctx.request` (a `Buffer` body or rawBody); text is not. */
function keptBytes(request: KoaContextLike['request']): Uint8Array | undefined {
  if (request.rawBody instanceof Uint8Array) return request.rawBody;
  return request.body instanceof Uint8Array ? request.body : undefined;
}

async function answer(receiver: WebhookReceiverLike, ctx: KoaContextLike): Promise<void> {
  const { req, res } = ctx;
  let verdict: Verdict;
  try {
    verdict = await receiver.receive({
      body: keptBytes(ctx.request) ?? nodeBodyInput(req, FIX),
      headers: req.headers,
      method: ctx.method,
      signal: disconnectSignal(res),
    });
  } catch (error) {
    // Our receivers never reject; one built elsewhere might, and must still get an answer.
    verdict = failed(receiver.service, 'internal_error', error);
  }
  // An upload the receiver stopped reading: answer, then cut the connection instead of reading it.
  if (!req.readableEnded) lingerThenClose(req, res);
  const { status, headers, body } = httpAnswer(verdict);
  ctx.status = status;
  ctx.set(headers);
  ctx.body = body;
}

/**
 * Koa middleware (tested on Koa 3; Koa 2 has the same context) for one receiver (answers every request that reaches it: mount it on a
 * router's route) or for receivers by exact pathname (`ctx.path`; any other path goes to `next()`).
 * The body is read from `ctx.req` within the receiver's `maxBodyBytes` and `bodyTimeoutMs`, or taken
 * from a `Buffer` a raw parser left in `ctx.request.body` / `ctx.request.rawBody`. A body a parser
 * consumed (koa-bodyparser, @koa/bodyparser: their `rawBody` is decoded text) is refused with 500
 * `raw_body_unavailable`, the fix in the receiver's log. The handlers' `signal` aborts if the sender
 * disconnects.
 *
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { createKoaMiddleware } from '@svc/webhooks/koa';
 *
 * const app = new Koa();
 * // First: the webhook paths never reach the body parser.
 * app.use(createKoaMiddleware({ '/webhooks/mail': mailReceiver, '/webhooks/crm': crmReceiver }));
 * ```
 */
export function createKoaMiddleware(
  routes: WebhookRoutes,
): (ctx: KoaContextLike, next: () => Promise<unknown>) => Promise<void> {
  return async (ctx, next) => {
    const receiver = findReceiver(routes, ctx.path);
    if (receiver === undefined) {
      await next();
      return;
    }
    await answer(receiver, ctx);
  };
}
