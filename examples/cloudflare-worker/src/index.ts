/**
 * @module
 * Receiving both services' webhooks in a Cloudflare Worker, without `nodejs_compat`.
 *
 * The secrets are the Worker's bindings (`wrangler secret put`, or `.dev.vars` locally); the
 * receivers are created on the first request with them, once per isolate, and each handled event
 * prints one JSON line (`wrangler tail` shows it). Handlers still running at their deadline go on
 * after the 503 under `ctx.waitUntil`, and their outcome is recorded. Run it: README.md.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';

/** The Worker's bindings (wrangler.toml, `wrangler secret put`). */
export interface Env {
  SVC_MAIL_WEBHOOK_SECRET: string;
  SVC_CRM_WEBHOOK_SECRET: string;
}

const print = (service: string, event: string, deliveryId: string) =>
  console.log(JSON.stringify({ service, event, deliveryId }));

export default {
  fetch: createFetchHandler((env: Env) => ({
    '/webhooks/mail': createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET }).onAny(
      async (event, { deliveryId }) => {
        // Your work here (a fetch to your API, a queue's send, a D1 write), then:
        print('mail', event.name, deliveryId);
      },
    ),
    '/webhooks/crm': createCrmReceiver({ secret: env.SVC_CRM_WEBHOOK_SECRET }).onAny(
      async (event, { deliveryId }) => {
        print('crm', event.name, deliveryId);
      },
    ),
  })),
};
