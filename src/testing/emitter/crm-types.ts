import type { CrmEventName } from '../../crm/event-names.js';
import type { EmittedAttempt, EmittedDeliveryStatus, EmitterOptions } from './types.js';

/**
 * A CRM webhook (crm-service §2). The secret is full in the create and rotate responses, masked elsewhere.
 *
 * @example
 * ```ts
 * const hooks: CrmEmitterWebhook[] = crm.listWebhooks();
 * const inactive = hooks.filter((h) => !h.active);
 * ```
 */
export interface CrmEmitterWebhook {
  id: string;
  name: string;
  url: string;
  events: CrmEventName[];
  /** An inactive webhook receives nothing (crm-service §3); never changed automatically. */
  active: boolean;
  secret: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * Body of `createWebhook` (`POST /v1/webhooks`). `active` is our addition (default true).
 *
 * @example
 * ```ts
 * const hook = crm.createWebhook({ name: 'sales', url: 'https://hooks.example.com/crm', events: ['deal.won'] } satisfies CreateCrmWebhookInput);
 * ```
 *
 * @example
 * ```ts
 * import type { CreateCrmWebhookInput } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: CreateCrmWebhookInput): CreateCrmWebhookInput {
 *   return value;
 * }
 * ```
 */
export type CreateCrmWebhookInput = {
  name: string;
  url: string;
  /** The service's events, or a newer service's (the emitter's `newEvents` option). */
  events: readonly (CrmEventName | (string & {}))[];
  active?: boolean;
  /**
   * The webhook's secret (16+ characters) instead of a generated one, for an app that already has
   * its own: the emulator's addition (`svc-webhooks emulate --secret`); the service always generates it.
   */
  secret?: string;
};

/**
 * Body of `updateWebhook` (`PATCH /v1/webhooks/:id`): any of name, url, events, active.
 *
 * @example
 * ```ts
 * crm.updateWebhook(id, { active: false } satisfies UpdateCrmWebhookInput);
 * ```
 *
 * @example
 * ```ts
 * import type { UpdateCrmWebhookInput } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: UpdateCrmWebhookInput): UpdateCrmWebhookInput {
 *   return value;
 * }
 * ```
 */
export type UpdateCrmWebhookInput = {
  name?: string;
  url?: string;
  events?: readonly (CrmEventName | (string & {}))[];
  active?: boolean;
};

/**
 * One entry of the delivery history (crm-service §2: HTTP status, attempt count, success).
 *
 * @example
 * ```ts
 * const [latest]: CrmDeliverySummary[] = crm.listDeliveries(id);
 * expect(latest).toMatchObject({ statusCode: 200, attempts: 1, success: true });
 * ```
 *
 * @example
 * ```ts
 * import type { CrmDeliverySummary } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: CrmDeliverySummary): CrmDeliverySummary {
 *   return value;
 * }
 * ```
 */
export type CrmDeliverySummary = {
  /** The delivery id: the envelope `id` and `X-Svc-Delivery`. */
  id: string;
  event: string;
  /** HTTP status of the last attempt; 0 when no response arrived; null before any attempt. */
  statusCode: number | null;
  /** Attempts made so far (at most 3). */
  attempts: number;
  success: boolean;
  status: EmittedDeliveryStatus;
  createdAt: string;
  /** Every attempt, oldest first. */
  attemptLog: EmittedAttempt[];
};

/**
 * Options of {@link createCrmEmitter}.
 *
 * @example
 * ```ts
 * const crm = createCrmEmitter({ clock, tenantId: 't_1' } satisfies CrmEmitterOptions);
 * ```
 */
export interface CrmEmitterOptions extends EmitterOptions {
  /** `tenant_id` of every envelope. Default `'tenant_test'`. */
  tenantId?: string;
  /** Gaps before attempts 2 and 3, in ms after the previous attempt ended (crm-service §6 rule 5). Default `[1_000, 2_000]`. */
  retryDelaysMs?: readonly [number, number];
  /** Deliveries listed per webhook (crm-service §8). Default 50. */
  historySize?: number;
  /** Validate emitted `data` against the library's schemas. Default true. */
  validate?: boolean;
}
