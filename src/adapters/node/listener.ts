import type { IncomingMessage, ServerResponse } from 'node:http';
import { findReceiver, NOT_FOUND_BODY, type WebhookRoutes } from '../routes.js';
import { handleNodeRequest } from './handle-request.js';

/**
 * A `node:http` request listener serving one receiver on every path, or receivers by pathname
 * (any other path: 404 `not_found`).
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createNodeListener } from '@svc/webhooks/node';
 *
 * createServer(createNodeListener({ '/webhooks/mail': mailReceiver, '/webhooks/crm': crmReceiver })).listen(3000);
 * ```
 */
export function createNodeListener(
  routes: WebhookRoutes,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const receiver = findReceiver(routes, query === -1 ? url : url.slice(0, query));
    if (receiver === undefined) {
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': NOT_FOUND_BODY.length });
      res.end(NOT_FOUND_BODY);
      return;
    }
    void handleNodeRequest(receiver, req, res);
  };
}
