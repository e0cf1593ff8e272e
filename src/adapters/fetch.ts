/**
 * @module
 * `@svc/webhooks/fetch`: receivers as a `(Request) => Promise<Response>` handler for any
 * web-standard server (Next.js App Router, Hono, Bun, Deno, Cloudflare Workers).
 */
import type { WebhookReceiverLike } from '../core/receiver-types.js';
import { findReceiver, NOT_FOUND_BODY, type WebhookRoutes } from './routes.js';

export type { WebhookRoutes } from './routes.js';

/**
 * A web-standard request handler.
 *
 * @example
 * ```ts
 * import type { FetchHandler } from '@svc/webhooks/fetch';
 *
 * const handler: FetchHandler = createFetchHandler(mailReceiver);
 * Bun.serve({ fetch: handler });
 * ```
 */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * A fetch handler for one receiver (any path), or for receivers by pathname (other paths: 404
 * `not_found`). The receiver reads the body as bytes, capped at its `maxBodyBytes` (413 past it).
 *
 * @example
 * ```ts
 * import { createFetchHandler } from '@svc/webhooks/fetch';
 *
 * // Bun / Deno / Workers
 * export default {
 *   fetch: createFetchHandler({ '/webhooks/mail': mailReceiver, '/webhooks/crm': crmReceiver }),
 * };
 * ```
 */
export function createFetchHandler(routes: WebhookRoutes): FetchHandler {
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
