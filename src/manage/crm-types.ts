import type { CrmEventName } from '../crm/event-names.js';

/**
 * A CRM webhook as the management API returns it (crm-service §2). Unknown fields are kept.
 *
 * @example
 * ```ts
 * const hooks: CrmWebhook[] = await crm.listWebhooks();
 * const off = hooks.filter((h) => h.active === false);
 * ```
 */
export interface CrmWebhook {
  id: string;
  name?: string;
  url: string;
  events: string[];
  active?: boolean;
  /** Full in the create and rotate answers, masked elsewhere. */
  secret?: string;
  createdAt?: string;
  updatedAt?: string;
  [field: string]: unknown;
}

/**
 * Body of `createWebhook` (`POST /v1/webhooks`, answered 201 with the secret).
 *
 * @example
 * ```ts
 * await crm.createWebhook({ name: 'sales', url: 'https://hooks.example.com/crm', events: ['deal.won'] });
 * ```
 */
export interface CreateCrmWebhook {
  name: string;
  url: string;
  events: readonly CrmEventName[];
  active?: boolean;
}

/**
 * Body of `updateWebhook` (`PATCH /v1/webhooks/:id`): any of name, url, events, active.
 *
 * @example
 * ```ts
 * await crm.updateWebhook(id, { active: false });
 * ```
 */
export interface UpdateCrmWebhook {
  name?: string;
  url?: string;
  events?: readonly CrmEventName[];
  active?: boolean;
}

/**
 * One entry of a CRM webhook's delivery history (crm-service §2: HTTP status, attempt count, success;
 * other fields not shown). snake_case names are normalised; unknown fields are kept.
 *
 * @example
 * ```ts
 * const failed = (await crm.listDeliveries(id)).filter((d: CrmDelivery) => !d.success);
 * ```
 */
export interface CrmDelivery {
  /** The delivery id (`X-Svc-Delivery`, the envelope's `id`). */
  id: string;
  event?: string;
  statusCode?: number | null;
  attempts?: number;
  success: boolean;
  /** `pending`, `succeeded`, `failed` or `cancelled` on the emulated API. */
  status?: string;
  createdAt?: string;
  [field: string]: unknown;
}
