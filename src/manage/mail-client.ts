import { systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { createHttpClient } from './http-client.js';
import type { CallOptions, HttpClientOptions } from './http-types.js';
import { mailAuthMethods } from './mail-auth.js';
import type {
  CreateMailWebhook,
  MailDeliveryPage,
  MailDeliveryQuery,
  MailWebhook,
  UpdateMailWebhook,
} from './mail-types.js';
import { isRecordWithId, listOf, mailAttemptOf, nextCursorOf, recordOf, toEpochMs } from './normalize.js';
import { id } from './path-id.js';
import type { RetryResult } from './retry-result.js';
import { retryResultOf } from './retry-result.js';

/**
 * Options of {@link createMailClient}: one credential (email-service §5) and the transport options.
 *
 * @example
 * ```ts
 * const options: MailClientOptions = { baseUrl: 'https://api.svcmail.example', apiKey: process.env.SVC_MAIL_API_KEY! };
 * ```
 */
export interface MailClientOptions extends HttpClientOptions {
  /** An API key (`zm_live_…`), sent as `X-API-Key` (email-service §5.1). */
  apiKey?: string;
  /** A user session token (JWT), sent as `Authorization: Bearer` (§5.3) when there is no `apiKey`. */
  sessionToken?: string;
}

/**
 * A typed client of the email service's management API: webhooks (create, list, get, update, delete,
 * reactivate, rotate the secret, send a test), delivery attempt records with retry, and the auth routes
 * automation needs (`me`, API keys). Failures are {@link WebhookError}s (`unauthorized`,
 * `insufficient_scope`, `not_found`, `rate_limited` with `resetAt`, `request_timeout`, …); 429s are
 * retried after the service's reset time, up to a cap.
 *
 * @example
 * ```ts
 * import { createMailClient } from '@svc/webhooks/manage';
 *
 * const mail = createMailClient({ baseUrl: 'https://api.svcmail.example', apiKey: process.env.SVC_MAIL_API_KEY! });
 * const hook = await mail.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'] });
 * store(hook.secret); // shown in full only now
 * ```
 */
export function createMailClient(options: MailClientOptions) {
  const { apiKey, sessionToken, ...transport } = options;
  if (!apiKey && !sessionToken) {
    throw new WebhookError('options_invalid', 'createMailClient needs an apiKey (or a sessionToken).');
  }
  const auth: Record<string, string> = apiKey
    ? { 'X-API-Key': apiKey }
    : { Authorization: `Bearer ${sessionToken}` };
  const http = createHttpClient('email', { ...transport, auth });
  const clock = transport.clock ?? systemClock;
  const webhook = (body: unknown): MailWebhook => recordOf<MailWebhook>(body, 'email', 'webhook');
  const path = (webhookId: string): string => `/api/v1/webhooks/${id(webhookId)}`;
  // email-service §4 does not show PATCH's answer: when it is not the webhook, read it back.
  async function patch(webhookId: string, body: UpdateMailWebhook, call?: CallOptions): Promise<MailWebhook> {
    const answer = await http.request('PATCH', path(webhookId), { ...call, body });
    if (isRecordWithId(answer)) return webhook(answer);
    return webhook(await http.request('GET', path(webhookId), { ...call }));
  }

  return {
    service: 'mail' as const,
    ...mailAuthMethods(http),
    /** `POST /api/v1/webhooks` (admin): the webhook with its full secret, shown only now. */
    createWebhook: async (input: CreateMailWebhook, call?: CallOptions): Promise<MailWebhook> =>
      webhook(await http.request('POST', '/api/v1/webhooks', { ...call, body: input })),
    /** `GET /api/v1/webhooks`: every webhook, secrets masked. */
    listWebhooks: async (call?: CallOptions): Promise<MailWebhook[]> =>
      listOf(await http.request('GET', '/api/v1/webhooks', { ...call }), 'email', 'webhooks').map(webhook),
    /** `GET /api/v1/webhooks/:id`. */
    getWebhook: async (webhookId: string, call?: CallOptions): Promise<MailWebhook> =>
      webhook(await http.request('GET', `/api/v1/webhooks/${id(webhookId)}`, { ...call })),
    /** `PATCH /api/v1/webhooks/:id`: change url, events, description or status. */
    updateWebhook: (webhookId: string, input: UpdateMailWebhook, call?: CallOptions): Promise<MailWebhook> =>
      patch(webhookId, input, call),
    /** Reactivates a paused webhook (email-service §3): `PATCH` with `{ status: 'active' }`. */
    reactivateWebhook: (webhookId: string, call?: CallOptions): Promise<MailWebhook> =>
      patch(webhookId, { status: 'active' }, call),
    /** `DELETE /api/v1/webhooks/:id`. */
    deleteWebhook: async (webhookId: string, call?: CallOptions): Promise<void> => {
      await http.request('DELETE', `/api/v1/webhooks/${id(webhookId)}`, { ...call });
    },
    /** `POST /api/v1/webhooks/:id/rotate-secret`: the new secret, in full. */
    rotateSecret: async (webhookId: string, call?: CallOptions): Promise<{ id: string; secret: string }> => {
      const body = await http.request<{ secret?: unknown }>(
        'POST',
        `/api/v1/webhooks/${id(webhookId)}/rotate-secret`,
        { ...call },
      );
      if (typeof body?.secret !== 'string') {
        throw new WebhookError('response_invalid', 'The email API answered rotate-secret without a secret.');
      }
      return { id: webhookId, secret: body.secret };
    },
    /** `POST /api/v1/webhooks/:id/test`: a synthetic signed `delivered` event (email-service §6 rule 7). */
    sendTest: (webhookId: string, call?: CallOptions): Promise<unknown> =>
      http.request('POST', `/api/v1/webhooks/${id(webhookId)}/test`, { ...call }),
    /** `GET /api/v1/webhooks/:id/deliveries`: one page of attempt records, newest first. */
    async listDeliveries(
      webhookId: string,
      query: MailDeliveryQuery = {},
      call?: CallOptions,
    ): Promise<MailDeliveryPage> {
      const since = query.since === undefined ? undefined : toEpochMs(query.since, clock.now());
      const body = await http.request('GET', `/api/v1/webhooks/${id(webhookId)}/deliveries`, {
        ...call,
        query: {
          since: since === undefined ? undefined : new Date(since).toISOString(),
          success: query.success,
          limit: query.limit,
          cursor: query.cursor,
        },
      });
      const data = listOf(body, 'email', 'deliveries')
        .map(mailAttemptOf)
        .filter((a) => a !== null)
        // Applied here too: a service that ignores the parameters still gives the right answer.
        .filter((a) => since === undefined || Date.parse(a.attemptedAt) >= since)
        .filter((a) => query.success === undefined || a.success === query.success);
      return { data, nextCursor: nextCursorOf(body) };
    },
    /** `POST /api/v1/webhooks/:id/deliveries/:deliveryId/retry`: resends one delivery once. */
    retryDelivery: async (webhookId: string, deliveryId: string, call?: CallOptions): Promise<RetryResult> =>
      retryResultOf(
        await http.request('POST', `/api/v1/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/retry`, {
          ...call,
        }),
      ),
  };
}

/**
 * The email management client.
 *
 * @example
 * ```ts
 * function provision(mail: MailClient) {
 *   return mail.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'] });
 * }
 * ```
 */
export type MailClient = ReturnType<typeof createMailClient>;
