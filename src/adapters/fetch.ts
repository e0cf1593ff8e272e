/**
 * @module
 * `@svc/webhooks/fetch`: receivers as a `(Request) => Promise<Response>` handler for any
 * web-standard server (Next.js App Router, Hono, Bun, Deno, Cloudflare Workers).
 */
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { findReceiver, NOT_FOUND_BODY, type WebhookRoutes } from './routes.js';

export type { WebhookRoutes } from './routes.js';

/**
 * A web-standard request handler.
 */
type FetchHandler = (request: Request) => Promise<Response>;

/**
 * A fetch handler for one receiver (any path), or for receivers by pathname (other paths: 404
 * `not_found`). The receiver reads the body as bytes, capped at its `maxBodyBytes` (413 past it) and
 * its `bodyTimeoutMs` (408). Pass a function returning the receiver (or the routes) to create them on
 * the first request instead: frameworks such as Next.js evaluate route modules at build time, when the
 * secrets may not be set (a receiver created then throws `secret_invalid` and fails the build).
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createFetchHandler } from '@svc/webhooks/fetch';
 *
 * // Bun / Deno / Workers
 * export default {
 *   fetch: createFetchHandler({ '/webhooks/mail': mailReceiver, '/webhooks/crm': crmReceiver }),
 * };
 * // Next.js App Router (app/webhooks/mail/route.ts): created on the first request, not by `next build`
 * export const POST = createFetchHandler(() => createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! }));
 * ```
 */
export function createFetchHandler(routes: WebhookRoutes | (() => WebhookRoutes)): FetchHandler {
  if (typeof routes === 'function') {
    let handler: FetchHandler | undefined;
    return (request) => {
      try {
        handler ??= createFetchHandler(routes());
      } catch (error) {
        return Promise.reject(error);
      }
      return handler(request);
    };
  }
  const single = findReceiver(routes, '\0');
  if (single !== undefined) return (request) => single.handle(request);
  return (request) => {
    const receiver: WebhookReceiverLike | undefined = findReceiver(routes, new URL(request.url).pathname);
    if (receiver !== undefined) return receiver.handle(request);
    return Promise.resolve(
      new Response(NOT_FOUND_BODY, { status: 404, headers: { 'content-type': 'application/json' } }),
    );
  };
}
