/**
 * @module
 * `@svc/webhooks/next`: receivers as Next.js route handlers, for the App Router (Node and edge
 * runtimes) and the Pages Router.
 */
import type { ServerResponse } from 'node:http';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { handleNodeRequest } from './node/handle-request.js';
import type { NodeRequestLike } from './node/raw-body.js';

/**
 * The App Router's route handlers (a `NextRequest` is a `Request`).
 */
type NextRouteHandlers = {
  POST: (request: Request) => Promise<Response>;
};

/**
 * A receiver, or a function returning one on the first request: route modules are evaluated at build
 * time too, when the secrets may not be set yet.
 */
type ReceiverSource = WebhookReceiverLike | (() => WebhookReceiverLike);

function lazy(source: ReceiverSource): () => WebhookReceiverLike {
  if (typeof source !== 'function') return () => source;
  let receiver: WebhookReceiverLike | undefined;
  return () => {
    receiver ??= source();
    return receiver;
  };
}

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
  // biome-ignore lint/correctness/noComponentHookFactories: Next's route handler name, not a React component.
  return { POST: (request) => get().handle(request) };
}

/**
 * A Pages Router API route, typed structurally (`NextApiRequest` is an `IncomingMessage`).
 */
type NextPagesHandler = (req: NodeRequestLike, res: ServerResponse) => Promise<void>;

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
  return (req, res) => handleNodeRequest(get(), req, res, FIX);
}
