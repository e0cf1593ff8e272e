/**
 * @module
 * `@svc/webhooks/next`: receivers as Next.js route handlers, for the App Router (Node and edge
 * runtimes) and the Pages Router.
 */
import type { ServerResponse } from 'node:http';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { isWebhookError } from '../shared/errors.js';
import { handleNodeRequest, type NodeRequestLike } from './node/handle-request.js';

/**
 * The App Router's route handlers (a `NextRequest` is a `Request`).
 *
 * @example
 * ```ts
 * import type { NextRouteHandlers } from '@svc/webhooks/next';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: NextRouteHandlers): NextRouteHandlers {
 *   return value;
 * }
 * ```
 */
export type NextRouteHandlers = {
  POST: (request: Request) => Promise<Response>;
};

/**
 * A receiver, or a function returning one on the first request: route modules are evaluated at build
 * time too, when the secrets may not be set yet.
 *
 * @example
 * ```ts
 * import type { ReceiverSource } from '@svc/webhooks/next';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: ReceiverSource): ReceiverSource {
 *   return value;
 * }
 * ```
 */
export type ReceiverSource = WebhookReceiverLike | (() => WebhookReceiverLike);

/** Why a lazy route has no receiver: its answer, the same on every request. */
interface CreationFailure {
  status: number;
  body: string;
}

// The variables the examples and docs read each service's secret from.
const SECRET_VARIABLE: Record<string, string> = {
  createMailReceiver: 'SVC_MAIL_WEBHOOK_SECRET',
  createCrmReceiver: 'SVC_CRM_WEBHOOK_SECRET',
};

/**
 * The answer of a factory that threw. Our errors (a secret not set or too short: `secret_invalid`)
 * carry no secret and are answered as they are, naming the variable of the receiver's service; any
 * other error is the app's own and may hold a connection string, so its sender gets a generic
 * `options_invalid` and only the log gets the message.
 */
function creationFailure(error: unknown): { failure: CreationFailure; log: unknown[] } {
  if (isWebhookError(error)) {
    const factory = /^(create\w+Receiver):/.exec(error.message)?.[1];
    const variable = factory === undefined ? undefined : SECRET_VARIABLE[factory];
    const message =
      error.code === 'secret_invalid' && variable !== undefined
        ? `${error.message} Set ${variable} to the secret the service issued for this webhook.`
        : error.message;
    const body = JSON.stringify({ error: { code: error.code, message } });
    return { failure: { status: error.status, body }, log: [`Webhook route not configured: ${message}`] };
  }
  const message = 'The webhook route could not create its receiver; the reason is in the app log.';
  const body = JSON.stringify({ error: { code: 'options_invalid', message } });
  return { failure: { status: 500, body }, log: ['Webhook route could not create its receiver:', error] };
}

/**
 * The receiver, created on the first request. A factory that throws is called again on the next
 * request (a fixed environment then works), its answer is the same each time, and its error is
 * logged once per message: not a stack on every delivery.
 */
function lazy(source: ReceiverSource): () => WebhookReceiverLike | CreationFailure {
  if (typeof source !== 'function') return () => source;
  let receiver: WebhookReceiverLike | undefined;
  const logged = new Set<string>();
  return () => {
    try {
      receiver ??= source();
      return receiver;
    } catch (error) {
      const { failure, log } = creationFailure(error);
      // Bounded: a factory whose message changes on every call is logged 16 times at most.
      if (!logged.has(failure.body) && logged.size < 16) {
        logged.add(failure.body);
        console.error(...log);
      }
      return failure;
    }
  };
}

const isFailure = (value: WebhookReceiverLike | CreationFailure): value is CreationFailure =>
  'body' in value && typeof value.body === 'string';

/**
 * App Router route handlers for a receiver. Works on the Node and the edge runtime: the body is read
 * from the web `Request` as bytes (App Router never parses it first).
 *
 * @example
 * ```ts
 * // app/webhooks/mail/route.ts
 * import { createNextRouteHandlers } from '@svc/webhooks/next';
 * import { receivers } from '@/lib/receivers'; // your app's module
 *
 * // Lazy: the receiver (and its secret) is created on the first request, not at build time.
 * export const { POST } = createNextRouteHandlers(() => receivers().mail);
 * ```
 */
export function createNextRouteHandlers(receiver: ReceiverSource): NextRouteHandlers {
  const get = lazy(receiver);
  return {
    // biome-ignore lint/correctness/noComponentHookFactories: Next's route handler name, not a React component.
    POST: async (request) => {
      const receiver = get();
      if (!isFailure(receiver)) return receiver.handle(request);
      return new Response(receiver.body, {
        status: receiver.status,
        headers: { 'content-type': 'application/json' },
      });
    },
  };
}

/**
 * A Pages Router API route, typed structurally (`NextApiRequest` is an `IncomingMessage`).
 *
 * @example
 * ```ts
 * import type { NextPagesHandler } from '@svc/webhooks/next';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: NextPagesHandler): NextPagesHandler {
 *   return value;
 * }
 * ```
 */
export type NextPagesHandler = (req: NodeRequestLike, res: ServerResponse) => Promise<void>;

// Logged with the 500 raw_body_unavailable when Next's body parser is still on.
const FIX =
  'Disable Next.js body parsing for this API route: export const config = { api: { bodyParser: false } };';

/**
 * A Pages Router API route for a receiver. The page must turn Next's body parser off with a literal
 * `export const config = { api: { bodyParser: false } }` (Next reads it statically, so it cannot be
 * imported); if it is on, every request is refused with 500 `raw_body_unavailable`, and the
 * receiver's log names that fix. The handlers' `signal` aborts if the sender disconnects.
 *
 * @example
 * ```ts
 * // pages/api/webhooks/mail.ts
 * import { createNextPagesHandler } from '@svc/webhooks/next';
 * import { receivers } from '@/lib/receivers'; // your app's module
 *
 * export const config = { api: { bodyParser: false } };
 * export default createNextPagesHandler(() => receivers().mail);
 * ```
 */
export function createNextPagesHandler(receiver: ReceiverSource): NextPagesHandler {
  const get = lazy(receiver);
  return async (req, res) => {
    const receiver = get();
    if (!isFailure(receiver)) return handleNodeRequest(receiver, req, res, FIX);
    res.writeHead(receiver.status, { 'content-type': 'application/json' }).end(receiver.body);
  };
}
