import { WebhookError } from '../shared/errors.js';
import type { CreateCrmWebhook, CrmDelivery, CrmWebhook, UpdateCrmWebhook } from './crm-types.js';
import { createHttpClient } from './http-client.js';
import type { CallOptions, HttpClientOptions } from './http-types.js';
import { crmDeliveryOf, isRecordWithId, listOf, recordOf } from './normalize.js';
import { id } from './path-id.js';

/**
 * Options of {@link createCrmClient}. crm-service §5 does not show the credential: like the emulated
 * API, the client sends `Authorization: Bearer <token>`; a service that wants another header gets it
 * through `headers` (and `token` can then be left out).
 *
 * @example
 * ```ts
 * const options: CrmClientOptions = { baseUrl: 'https://api.svccrm.example', token: process.env.SVC_CRM_TOKEN! };
 * ```
 */
export interface CrmClientOptions extends HttpClientOptions {
  /** A token holding `integrations:manage` (crm-service §4). */
  token?: string;
}

/**
 * A typed client of the CRM service's webhook-management routes (crm-service §4): create, list, get,
 * update, delete, reactivate (`active: true`), rotate the secret, the accepted event names and the
 * delivery history (the 50 most recent). The CRM has no route to resend a delivery or send a test.
 *
 * @example
 * ```ts
 * import { createCrmClient } from '@svc/webhooks/manage';
 *
 * const crm = createCrmClient({ baseUrl: 'https://api.svccrm.example', token: process.env.SVC_CRM_TOKEN! });
 * const failed = (await crm.listDeliveries(webhookId)).filter((d) => !d.success);
 * ```
 */
export function createCrmClient(options: CrmClientOptions) {
  const { token, ...transport } = options;
  if (!token && !transport.headers) {
    throw new WebhookError('options_invalid', 'createCrmClient needs a token (or auth headers).');
  }
  const http = createHttpClient('CRM', {
    ...transport,
    auth: token ? { Authorization: `Bearer ${token}` } : {},
  });
  const webhook = (body: unknown): CrmWebhook => recordOf<CrmWebhook>(body, 'CRM', 'webhook');
  const path = (webhookId: string): string => `/v1/webhooks/${id(webhookId)}`;
  // crm-service §4 does not show PATCH's answer: when it is not the webhook, read it back.
  async function patch(webhookId: string, body: UpdateCrmWebhook, call?: CallOptions): Promise<CrmWebhook> {
    const answer = await http.request('PATCH', path(webhookId), { ...call, body });
    if (isRecordWithId(answer)) return webhook(answer);
    return webhook(await http.request('GET', path(webhookId), { ...call }));
  }

  return {
    service: 'crm' as const,
    /** `POST /v1/webhooks` (201): the webhook including its secret. */
    createWebhook: async (input: CreateCrmWebhook, call?: CallOptions): Promise<CrmWebhook> =>
      webhook(await http.request('POST', '/v1/webhooks', { ...call, body: input })),
    /** `GET /v1/webhooks`: the tenant's webhooks. */
    listWebhooks: async (call?: CallOptions): Promise<CrmWebhook[]> =>
      listOf(await http.request('GET', '/v1/webhooks', { ...call }), 'CRM', 'webhooks').map(webhook),
    /** `GET /v1/webhooks/:id` (the emulated API's; not in crm-service §4). */
    getWebhook: async (webhookId: string, call?: CallOptions): Promise<CrmWebhook> =>
      webhook(await http.request('GET', `/v1/webhooks/${id(webhookId)}`, { ...call })),
    /** `GET /v1/webhooks/events`: event names accepted for subscription. */
    listEventNames: async (call?: CallOptions): Promise<string[]> => {
      const body = await http.request<unknown>('GET', '/v1/webhooks/events', { ...call });
      const list = Array.isArray(body) ? body : (body as { data?: unknown } | undefined)?.data;
      if (!Array.isArray(list)) {
        throw new WebhookError('response_invalid', 'The CRM API answered with no list of event names.');
      }
      return list.filter((name): name is string => typeof name === 'string');
    },
    /** `PATCH /v1/webhooks/:id`: any of name, url, events, active. */
    updateWebhook: (webhookId: string, input: UpdateCrmWebhook, call?: CallOptions): Promise<CrmWebhook> =>
      patch(webhookId, input, call),
    /** Sets `active: true` (crm-service §3): the webhook receives deliveries again. */
    reactivateWebhook: (webhookId: string, call?: CallOptions): Promise<CrmWebhook> =>
      patch(webhookId, { active: true }, call),
    /** `DELETE /v1/webhooks/:id`. */
    deleteWebhook: async (webhookId: string, call?: CallOptions): Promise<void> => {
      await http.request('DELETE', `/v1/webhooks/${id(webhookId)}`, { ...call });
    },
    /** `POST /v1/webhooks/:id/rotate-secret`: the new secret; the old one stops at once (crm-service §3). */
    rotateSecret: async (webhookId: string, call?: CallOptions): Promise<{ id: string; secret: string }> => {
      const body = await http.request<{ secret?: unknown }>(
        'POST',
        `/v1/webhooks/${id(webhookId)}/rotate-secret`,
        { ...call },
      );
      if (typeof body?.secret !== 'string') {
        throw new WebhookError('response_invalid', 'The CRM API answered rotate-secret without a secret.');
      }
      return { id: webhookId, secret: body.secret };
    },
    /** `GET /v1/webhooks/:id/deliveries`: the 50 most recent deliveries, newest first (crm-service §8). */
    listDeliveries: async (webhookId: string, call?: CallOptions): Promise<CrmDelivery[]> =>
      listOf(
        await http.request('GET', `/v1/webhooks/${id(webhookId)}/deliveries`, { ...call }),
        'CRM',
        'deliveries',
      )
        .map(crmDeliveryOf)
        .filter((d) => d !== null),
  };
}

/**
 * The CRM management client.
 *
 * @example
 * ```ts
 * async function pause(crm: CrmClient, id: string) {
 *   await crm.updateWebhook(id, { active: false });
 * }
 * ```
 */
export type CrmClient = ReturnType<typeof createCrmClient>;
