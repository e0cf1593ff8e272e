import type { WebhookReceiverLike } from '../receiver/create-receiver.js';

/**
 * What a multi-route adapter serves: one receiver for every path, or receivers by exact pathname
 * (`{ '/webhooks/mail': mail, '/webhooks/crm': crm }`; a trailing slash is ignored).
 *
 * @example
 * ```ts
 * import type { WebhookRoutes } from '@svc/webhooks/fetch';
 *
 * const routes: WebhookRoutes = { '/webhooks/mail': mailReceiver, '/webhooks/crm': crmReceiver };
 * ```
 */
export type WebhookRoutes = WebhookReceiverLike | Readonly<Record<string, WebhookReceiverLike>>;

/** The receiver for `pathname`, or `undefined` when no route matches. */
export function findReceiver(routes: WebhookRoutes, pathname: string): WebhookReceiverLike | undefined {
  if (isReceiver(routes)) return routes;
  const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  return Object.hasOwn(routes, path) ? routes[path] : undefined;
}

function isReceiver(routes: WebhookRoutes): routes is WebhookReceiverLike {
  return typeof (routes as { receive?: unknown }).receive === 'function';
}

/** The body of the 404 multi-route adapters answer for a path with no receiver. */
export const NOT_FOUND_BODY =
  '{"error":{"code":"not_found","message":"No webhook receiver is mounted at this path.","doc_url":"https://svc.github.io/webhooks/errors.html#not_found"}}';
