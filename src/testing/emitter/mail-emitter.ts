import type { MailEventName } from '../../mail/event-names.js';
import type { MailPayloadOf } from '../../mail/types.js';
import { WebhookError } from '../../shared/errors.js';
import type { Overrides } from '../fixtures/overrides.js';
import type { MailEmitterOptions, MailEmitterWebhook } from './mail-types.js';
import { mailWebhookApi } from './mail-webhooks.js';
import { createServiceEmitter } from './service-emitter.js';
import { mailEmitterSpec } from './specs.js';
import type { EmittedAttempt, EmittedDelivery } from './types.js';

/**
 * A reference implementation of the email service's delivery side, in memory, on an injected clock:
 * webhook management as email-service §4 lists it, deliveries with the §6 headers and signature,
 * attempts at 0 / +60 s / +120 s, pausing after 10 consecutive fully failed deliveries, attempt
 * records kept 90 days, manual retry (same `X-SvcMAIL-Id`) and test sends.
 *
 * @example
 * ```ts
 * import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
 *
 * const clock = createVirtualClock();
 * const emitter = createMailEmitter({ clock, handler: (request) => receiver.handle(request) });
 * const { id } = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'] });
 * await emitter.emit('bounced', { to: 'ana@example.com' });
 * await clock.runAll(); // retries, if the handler failed
 * emitter.listDeliveries(id); // attempt records, newest first
 * ```
 */
export function createMailEmitter(options: MailEmitterOptions = {}) {
  const spec = mailEmitterSpec(options);
  const base = createServiceEmitter(
    spec,
    options,
    // email-service §3: a success resets the count; the pauseAfter-th fully failed delivery in a row pauses.
    (delivery, webhook: MailEmitterWebhook) => {
      const { status } = delivery.record;
      if (status === 'succeeded') webhook.consecutiveFailures = 0;
      else if (status === 'failed' && ++webhook.consecutiveFailures >= spec.pauseAfter) pause(webhook);
    },
  );
  const { webhooks } = base;

  function pause(webhook: MailEmitterWebhook): void {
    webhook.status = 'paused';
    webhook.pausedAt = webhooks.iso();
    webhook.updatedAt = webhook.pausedAt;
    base.cancelPending(webhook.id);
    base.report({
      type: 'webhook_paused',
      service: 'mail',
      at: base.clock.now(),
      webhookId: webhook.id,
      consecutiveFailures: webhook.consecutiveFailures,
    });
  }

  return {
    service: 'mail' as const,
    clock: base.clock,
    ...mailWebhookApi(webhooks, options),
    onEvent: base.onEvent,
    /**
     * Emits `event` to every active webhook subscribed to it: the payload is a fixture with
     * `payload` applied (or `payload` itself with `{ fixture: false }`). Resolves after each
     * delivery's first attempt; retries run on the clock. Paused webhooks receive nothing. With no
     * webhook subscribed to `event` it resolves to `[]` and reports `no_subscriber` to `onEvent`, or
     * rejects with `webhook_not_found` under the `requireSubscriber` option. An event of the
     * `newEvents` option is sent with `payload` as given (and its `event` field), never validated.
     */
    emit: base.emit as {
      <N extends MailEventName>(
        event: N,
        payload?: Overrides<MailPayloadOf<N>>,
        emitOptions?: { fixture?: boolean },
      ): Promise<EmittedDelivery[]>;
      // Only a name this package does not know: a known event keeps its exact payload type.
      <E extends string>(
        event: E extends MailEventName ? never : E,
        payload?: Record<string, unknown>,
      ): Promise<EmittedDelivery[]>;
    },
    /** Attempt records of a webhook, newest first, kept 90 days (`GET /api/v1/webhooks/:id/deliveries`). */
    listDeliveries(webhookId: string): EmittedAttempt[] {
      webhooks.get(webhookId);
      return base.log
        .list(webhookId)
        .flatMap((d) => d.record.attempts)
        .sort(byNewest);
    },
    /** One delivery with all its attempts. */
    getDelivery: base.getDelivery,
    /**
     * Sends one delivery again, once, with the same `X-SvcMAIL-Id` and bytes (email-service §6 rule 5).
     * Refused with `webhook_paused` (409) while the webhook is paused: reactivate it first.
     */
    async retryDelivery(webhookId: string, deliveryId: string): Promise<EmittedAttempt> {
      const webhook = webhooks.get(webhookId);
      base.log.get(deliveryId, webhookId);
      if (webhook.status === 'paused') {
        throw new WebhookError(
          'webhook_paused',
          'The webhook is paused; reactivate it (PATCH status "active") before retrying.',
        );
      }
      const attempt = await base.retry(webhookId, deliveryId);
      if (attempt.success) webhook.consecutiveFailures = 0;
      return attempt;
    },
    /** Sends a synthetic signed `delivered` event (email-service §6 rule 7): one attempt, not counted towards pausing. */
    async sendTest(webhookId: string): Promise<EmittedDelivery> {
      webhooks.get(webhookId);
      const payload = base.fixtures.mail('delivered', {
        message_id: `test_${base.nextId().slice(0, 8)}`,
        to: 'test@example.com',
      });
      return base.test(webhookId, 'delivered', payload);
    },
  };
}

const byNewest = (a: EmittedAttempt, b: EmittedAttempt): number =>
  b.attemptedAt.localeCompare(a.attemptedAt) || b.attempt - a.attempt;

/**
 * The email emitter's API.
 *
 * @example
 * ```ts
 * let emitter: MailEmitter;
 * beforeEach(() => {
 *   emitter = createMailEmitter({ clock: createVirtualClock() });
 * });
 * ```
 */
export type MailEmitter = ReturnType<typeof createMailEmitter>;
