import type { CrmEventName } from '../../crm/event-names.js';
import { crmDataSchemas } from '../../crm/schemas.js';
import type { CrmDataOf } from '../../crm/types.js';
import { WebhookError } from '../../shared/errors.js';
import { isoTime } from '../clock/iso-time.js';
import { createFixtures } from '../fixtures/fixtures.js';
import type { Overrides } from '../fixtures/overrides.js';
import { crmDeliveryHeaders } from '../headers.js';
import type { CrmDeliverySummary, CrmEmitterOptions } from './crm-types.js';
import { createCrmWebhooks } from './crm-webhooks.js';
import { createEmitterBase } from './emitter-base.js';
import type { LiveDelivery } from './engine.js';
import type { DeliveryRecord } from './types.js';

type SafeParser = { safeParse(v: unknown): { success: boolean; error?: { message: string } } };

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
  const {
    tenantId = 'tenant_test',
    retryDelaysMs = [1_000, 2_000],
    historySize = 50,
    validate = true,
    vendor = 'Svc',
  } = options;
  const cancelPending = (webhookId: string): void => {
    for (const delivery of base.log.list(webhookId)) base.engine.cancel(delivery);
  };
  const webhooks = createCrmWebhooks(options, {
    clock: () => base.clock,
    random: () => base.random,
    onDelete: (id) => base.drop(id),
    onDeactivate: cancelPending,
  });
  const base = createEmitterBase({
    service: 'crm',
    options,
    keepPerWebhook: historySize,
    // crm-service §6 rule 5: spaced 1 s and 2 s apart, counted from the end of the previous attempt.
    nextAttemptAt: (_delivery, failed) => base.clock.now() + (retryDelaysMs[failed - 1] ?? 0),
    headers: (record, signature) => crmDeliveryHeaders(vendor, record.event, signature, record.id),
    prepare(delivery) {
      const webhook = webhooks.find(delivery.record.webhookId);
      if (!webhook) return { cancel: 'webhook deleted' };
      if (!webhook.active) return { cancel: 'webhook inactive' };
      // Signed with the current secret: after a rotation the old one stops at once.
      return base.signedAttempt(delivery, webhook.url, webhook.secret);
    },
    onSettled: () => {},
  });
  const fixtures = createFixtures({
    seed: options.seed === undefined ? undefined : `${options.seed}:fixtures`,
    now: base.clock.now,
    tenantId,
  });

  function summary(delivery: LiveDelivery): CrmDeliverySummary {
    const { record } = delivery;
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

  return {
    service: 'crm' as const,
    clock: base.clock,
    ...webhooks.api,
    onEvent: base.onEvent,
    /**
     * Emits `event` to every active webhook subscribed to it, one envelope per webhook (its `id` is
     * that delivery's id). `data` is a fixture with `data` applied, or `data` itself with
     * `{ fixture: false }`. Resolves after each first attempt; retries run on the clock. With no
     * webhook subscribed to `event` it resolves to `[]` and reports `no_subscriber` to `onEvent`, or
     * rejects with `webhook_not_found` under the `requireSubscriber` option.
     */
    async emit<N extends CrmEventName>(
      event: N,
      data?: Overrides<CrmDataOf<N>>,
      emitOptions: { fixture?: boolean } = {},
    ): Promise<DeliveryRecord[]> {
      const body = emitOptions.fixture === false ? { ...data } : fixtures.crm(event, data);
      if (validate) {
        const result = (crmDataSchemas as Record<string, SafeParser>)[event]?.safeParse(body);
        if (!result?.success) {
          throw new WebhookError(
            'invalid_payload',
            `Not valid ${event} data: ${result?.error?.message ?? 'unknown event'}`,
          );
        }
      }
      const timestamp = isoTime(base.clock.now());
      let skipped = 0;
      const targets = webhooks.subscribed(event, (webhookId) => {
        skipped++;
        base.emit({
          type: 'skipped',
          service: 'crm',
          at: base.clock.now(),
          webhookId,
          event,
          reason: 'webhook inactive',
        });
      });
      if (targets.length === 0 && skipped === 0) base.noSubscriber(event);
      // crm-service §2: envelope field order id, event, timestamp, tenant_id, data.
      const envelope = (id: string): string =>
        JSON.stringify({ id, event, timestamp, tenant_id: tenantId, data: body });
      return base.deliver(
        targets.map((w) => w.id),
        event,
        envelope,
      );
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
