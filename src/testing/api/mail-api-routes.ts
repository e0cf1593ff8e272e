/** The routes of the mocked email API under `/api/v1` (email-service §4), one handler per method. */
import type { MailEmitter } from '../emitter/mail-emitter.js';
import type { CreateMailWebhookInput, UpdateMailWebhookInput } from '../emitter/mail-types.js';
import { deliveryPage } from './delivery-page.js';
import type { createMailApiKeys } from './mail-api-keys.js';
import { json, type Route, readJson } from './responses.js';

/** What a route handler works on. */
export type MailRouteContext = { emitter: MailEmitter; apiKeys: ReturnType<typeof createMailApiKeys> };

export const MAIL_ROUTES: Route<MailRouteContext>[] = [
  {
    path: 'auth/api-keys',
    methods: {
      GET: ({ apiKeys }) => json(200, { data: apiKeys.list() }),
      POST: async ({ apiKeys }, _p, request) => json(201, await apiKeys.create(await readJson(request))),
    },
  },
  {
    // email-service §5: "Route for revoking a key: not shown". Ours: DELETE …/api-keys/:id.
    path: 'auth/api-keys/:id',
    methods: { DELETE: ({ apiKeys }, { id }) => json(200, apiKeys.revoke(id!)) },
  },
  {
    path: 'webhooks',
    methods: {
      GET: ({ emitter }) => json(200, { data: emitter.listWebhooks() }),
      POST: async ({ emitter }, _p, request) =>
        json(201, emitter.createWebhook((await readJson(request)) as CreateMailWebhookInput)),
    },
  },
  {
    path: 'webhooks/:id',
    methods: {
      GET: ({ emitter }, { id }) => json(200, emitter.getWebhook(id!)),
      PATCH: async ({ emitter }, { id }, request) =>
        json(200, emitter.updateWebhook(id!, (await readJson(request)) as UpdateMailWebhookInput)),
      DELETE: ({ emitter }, { id }) => json(200, emitter.deleteWebhook(id!)),
    },
  },
  {
    path: 'webhooks/:id/rotate-secret',
    methods: { POST: ({ emitter }, { id }) => json(200, emitter.rotateSecret(id!)) },
  },
  {
    path: 'webhooks/:id/deliveries',
    methods: {
      GET: ({ emitter }, { id }, request) =>
        json(200, deliveryPage(emitter.listDeliveries(id!), new URL(request.url).searchParams)),
    },
  },
  {
    path: 'webhooks/:id/deliveries/:deliveryId/retry',
    methods: {
      POST: async ({ emitter }, { id, deliveryId }) =>
        json(200, await emitter.retryDelivery(id!, deliveryId!)),
    },
  },
  {
    path: 'webhooks/:id/test',
    methods: { POST: async ({ emitter }, { id }) => json(200, await emitter.sendTest(id!)) },
  },
];
