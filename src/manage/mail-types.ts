import type { MailEventName } from '../mail/event-names.js';

/**
 * An email webhook as the management API returns it. Fields beyond `url`, `events`, `description`
 * and `secret` are not shown by email-service §2: the ones below are what the project's emulated API
 * sends; a real answer may lack some and carry others (kept, typed `unknown`).
 *
 * @example
 * ```ts
 * const hook: MailWebhook = await mail.getWebhook('wh_1');
 * if (hook.status === 'paused') await mail.reactivateWebhook(hook.id);
 * ```
 */
export interface MailWebhook {
  id: string;
  url: string;
  events: string[];
  description?: string;
  /** Full only in the creation response; masked later (email-service §2). */
  secret?: string;
  /** `paused` after 10 consecutive fully failed deliveries (email-service §3). */
  status?: 'active' | 'paused' | (string & {});
  consecutiveFailures?: number;
  createdAt?: string;
  updatedAt?: string;
  pausedAt?: string | null;
  [field: string]: unknown;
}

/**
 * Body of `createWebhook` (`POST /api/v1/webhooks`, email-service §4).
 *
 * @example
 * ```ts
 * await mail.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'], description: 'prod' });
 * ```
 */
export interface CreateMailWebhook {
  url: string;
  events: readonly MailEventName[];
  description?: string;
}

/**
 * Body of `updateWebhook` (`PATCH /api/v1/webhooks/:id`). `status: 'active'` reactivates a paused
 * webhook: the field is not shown by the spec; it is the decision of the emulated API (docs/manage-clients.md).
 *
 * @example
 * ```ts
 * await mail.updateWebhook(id, { events: ['bounced', 'complained'] });
 * ```
 */
export interface UpdateMailWebhook {
  url?: string;
  events?: readonly MailEventName[];
  description?: string;
  status?: 'active' | 'paused';
}

/**
 * One delivery attempt record (email-service §2 "Delivery attempt record", fields not shown): the
 * client normalises camelCase and snake_case names to these; unknown fields are kept.
 *
 * @example
 * ```ts
 * const { data }: { data: MailDeliveryAttempt[] } = await mail.listDeliveries(id);
 * const failed = data.filter((a) => !a.success);
 * ```
 */
export interface MailDeliveryAttempt {
  deliveryId: string;
  webhookId?: string;
  event?: string;
  /** 1, 2, 3 for the automatic schedule; manual retries continue the count. */
  attempt?: number;
  /** `scheduled`, `retry` or `test` on the emulated API. */
  kind?: string;
  /** ISO 8601. */
  attemptedAt: string;
  /** HTTP status the receiver answered; 0 when none. */
  statusCode?: number;
  success: boolean;
  error?: string | null;
  [field: string]: unknown;
}

/**
 * Filters and paging of `listDeliveries` (`GET /api/v1/webhooks/:id/deliveries`). The spec shows no
 * query parameters; these are the emulated API's (docs/manage-clients.md). The client also applies `since`
 * and `success` itself, so a service that ignores them still gives the right answer.
 *
 * @example
 * ```ts
 * await mail.listDeliveries(id, { since: Date.now() - 3_600_000, success: false, limit: 100 });
 * ```
 */
export interface MailDeliveryQuery {
  /** Only attempts at or after this time (epoch ms, `Date` or ISO string). */
  since?: number | Date | string;
  /** Only successful (`true`) or failed (`false`) attempts. */
  success?: boolean;
  /** Page size (1–500). Default: the service's. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/**
 * One page of attempt records, newest first.
 *
 * @example
 * ```ts
 * let page: MailDeliveryPage = await mail.listDeliveries(id, { limit: 100 });
 * while (page.nextCursor) page = await mail.listDeliveries(id, { limit: 100, cursor: page.nextCursor });
 * ```
 */
export interface MailDeliveryPage {
  data: MailDeliveryAttempt[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * The caller's identity (`GET /api/v1/auth/me`, email-service §2).
 *
 * @example
 * ```ts
 * const me: MailIdentity = await mail.me();
 * if (!me.scopes.includes('admin')) throw new Error('recovery needs an admin key');
 * ```
 */
export interface MailIdentity {
  authType: string;
  clientId: string;
  agencyId: string;
  role: string;
  scopes: string[];
  [field: string]: unknown;
}

/**
 * An API key record. `value` (`zm_live_…`) is present only in the creation response: the service
 * stores its SHA-256 hash (email-service §2). Other fields are the emulated API's (docs/manage-clients.md).
 *
 * @example
 * ```ts
 * const key: MailApiKey = await mail.createApiKey({ name: 'recovery', scopes: ['read', 'admin'] });
 * saveToSecretManager(key.value!);
 * ```
 */
export interface MailApiKey {
  id: string;
  /** The full key, returned once. */
  value?: string;
  name?: string;
  scopes: string[];
  rateLimitPerMinute?: number;
  createdAt?: string;
  [field: string]: unknown;
}

/**
 * Body of `createApiKey` (`POST /api/v1/auth/api-keys`, needs an admin key). Fields not shown by the
 * spec: these are the emulated API's.
 *
 * @example
 * ```ts
 * await mail.createApiKey({ name: 'ci', scopes: ['read'], rateLimitPerMinute: 100 });
 * ```
 */
export interface CreateMailApiKey {
  name?: string;
  scopes: readonly ('send' | 'read' | 'domains' | 'suppress' | 'privacy' | 'admin')[];
  rateLimitPerMinute?: number;
}
