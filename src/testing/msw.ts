/**
 * @module
 * `@svc/webhooks/testing/msw`: msw request handlers serving the services' webhook-management routes
 * from an emitter's state. The one entry that needs the optional peer `msw` (2.x on Node 20, 2.x or
 * 3.x on Node 22.12 and later); everything else of the testing kit is in `@svc/webhooks/testing`.
 */

import { type HttpHandler, http } from 'msw';
import { type CrmApiOptions, createCrmApi } from './api/crm-api.js';
import { createMailApi, type MailApiOptions } from './api/mail-api.js';
import type { CrmEmitter } from './emitter/crm-emitter.js';
import type { MailEmitter } from './emitter/mail-emitter.js';

/**
 * msw request handlers serving the email service's webhook-management routes from `emitter`'s
 * state (see {@link createMailApi} for auth, scopes and rate limits), and its OpenAPI description at
 * `/docs` and `/docs/json`. Requests it does not serve fall through to your other handlers.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { createMailEmitter } from '@svc/webhooks/testing';
 * import { mailApiHandlers } from '@svc/webhooks/testing/msw';
 *
 * const emitter = createMailEmitter();
 * const server = setupServer(...mailApiHandlers(emitter));
 * server.listen({ onUnhandledRequest: 'bypass' }); // msw 3: { onUnhandledFrame: 'bypass' }
 * ```
 */
export function mailApiHandlers(emitter: MailEmitter, options: MailApiOptions = {}): HttpHandler[] {
  const api = createMailApi(emitter, options);
  const base = api.baseUrl.replace(/\/$/, '');
  return [
    http.all(`${base}/api/*`, ({ request }) => api.handle(request)),
    // The OpenAPI description (email-service §1): `/docs` and `/docs/json`.
    http.get(`${base}/docs`, ({ request }) => api.handle(request)),
    http.get(`${base}/docs/json`, ({ request }) => api.handle(request)),
  ];
}

/**
 * msw request handlers serving the CRM service's webhook-management routes from `emitter`'s state
 * (see {@link createCrmApi}).
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { createCrmEmitter } from '@svc/webhooks/testing';
 * import { crmApiHandlers } from '@svc/webhooks/testing/msw';
 *
 * const server = setupServer(...crmApiHandlers(createCrmEmitter()));
 * server.listen({ onUnhandledRequest: 'bypass' }); // msw 3: onUnhandledFrame
 * ```
 */
export function crmApiHandlers(emitter: CrmEmitter, options: CrmApiOptions = {}): HttpHandler[] {
  const api = createCrmApi(emitter, options);
  return [http.all(`${api.baseUrl.replace(/\/$/, '')}/v1/*`, ({ request }) => api.handle(request))];
}
