import type { CrmEventName } from '../../crm/event-names.js';
import type { CrmDataOf } from '../../crm/types.js';
import type { Overrides } from '../fixtures/overrides.js';
import type { CrmDeliverySummary, CrmEmitterOptions } from './crm-types.js';
import { crmWebhookApi } from './crm-webhooks.js';
import type { LiveDelivery } from './engine.js';
import { createServiceEmitter } from './service-emitter.js';
import { crmEmitterSpec } from './specs.js';
import type { EmittedDelivery } from './types.js';

/**
 * A reference implementation of the CRM service's delivery side, in memory, on an injected clock:
 * webhook management as crm-service §4 lists it, envelopes `{ id, event, timestamp, tenant_id, data }`
 * with `id` equal to `X-Svc-Delivery`, the §6 headers (`User-Agent: Svc-CRM-Webhook/1.0`), at most
 * 3 attempts 1 s then 2 s apart, never paused automatically, nothing sent to inactive webhooks.
 *
 * @example
 * ```ts
 * import { createCrmEmitter, createVirtualClock } from '@svc/webhooks/testing';
 *
 * const clock = createVirtualClock();
 * const crm = createCrmEmitter({ clock, allowPrivateNetworks: true });
 * const hook = crm.createWebhook({ name: 'sales', url: 'http://127.0.0.1:3000/webhooks/crm', events: ['deal.won'] });
 * await crm.emit('deal.won', { value: 5000 });
 * await clock.runAll();
 * crm.listDeliveries(hook.id)[0]; // { statusCode, attempts, success, ... }
 * ```
 */
export function createCrmEmitter(options: CrmEmitterOptions = {}) {
  const base = createServiceEmitter(crmEmitterSpec(options), options);
  const { webhooks } = base;

  return {
    service: 'crm' as const,
    clock: base.clock,
    ...crmWebhookApi(webhooks, options, base.cancelPending),
    onEvent: base.onEvent,
    /**
     * Emits `event` to every active webhook subscribed to it, one envelope per webhook (its `id` is
     * that delivery's id). `data` is a fixture with `data` applied, or `data` itself with
     * `{ fixture: false }`. Resolves after each first attempt; retries run on the clock. With no
     * webhook subscribed to `event` it resolves to `[]` and reports `no_subscriber` to `onEvent`, or
     * rejects with `webhook_not_found` under the `requireSubscriber` option. An event of the
     * `newEvents` option is sent with `data` as given, never validated.
     */
    emit: base.emit as {
      <N extends CrmEventName>(
        event: N,
        data?: Overrides<CrmDataOf<N>>,
        emitOptions?: { fixture?: boolean },
      ): Promise<EmittedDelivery[]>;
      // Only a name this package does not know: a known event keeps its exact payload type.
      <E extends string>(
        event: E extends CrmEventName ? never : E,
        data?: Record<string, unknown>,
      ): Promise<EmittedDelivery[]>;
    },
    /** The 50 most recent deliveries of a webhook, newest first (`GET /v1/webhooks/:id/deliveries`). */
    listDeliveries(webhookId: string): CrmDeliverySummary[] {
      webhooks.get(webhookId);
      return base.log.list(webhookId).map(summary).reverse();
    },
    /** One delivery with all its attempts. */
    getDelivery: base.getDelivery,
  };
}

/** crm-service §2: a delivery record carries the HTTP status, the attempt count and the outcome. */
function summary({ record }: LiveDelivery): CrmDeliverySummary {
  const last = record.attempts.at(-1);
  return {
    id: record.id,
    event: record.event,
    statusCode: last ? last.statusCode : null,
    attempts: record.attempts.length,
    success: record.status === 'succeeded',
    status: record.status,
    createdAt: record.createdAt,
    attemptLog: record.attempts.map((a) => ({ ...a })),
  };
}

/**
 * The CRM emitter's API.
 *
 * @example
 * ```ts
 * let crm: CrmEmitter;
 * beforeEach(() => {
 *   crm = createCrmEmitter({ clock: createVirtualClock() });
 * });
 * ```
 */
export type CrmEmitter = ReturnType<typeof createCrmEmitter>;
