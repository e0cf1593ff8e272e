import type { MailEventName } from '../../mail/event-names.js';
import { mailPayloadSchemas } from '../../mail/schemas.js';
import type { MailPayloadOf } from '../../mail/types.js';
import { WebhookError } from '../../shared/errors.js';
import { createFixtures } from '../fixtures/fixtures.js';
import type { Overrides } from '../fixtures/overrides.js';
import { mailDeliveryHeaders } from '../headers.js';
import { createEmitterBase, type DeliveryContext } from './emitter-base.js';
import type { MailEmitterOptions } from './mail-types.js';
import { createMailWebhooks } from './mail-webhooks.js';
import type { AttemptRecord, DeliveryRecord } from './types.js';

const DAY = 86_400_000;

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
  const {
    clientId = 'client_test',
    retryOffsetsMs = [60_000, 120_000],
    pauseAfter = 10,
    retentionMs = 90 * DAY,
    validate = true,
    vendor = 'Svc',
  } = options;
  const webhooks = createMailWebhooks(options, {
    clock: () => base.clock,
    random: () => base.random,
    onDelete: (id) => base.drop(id),
  });
  const base = createEmitterBase({
    service: 'mail',
    options,
    retentionMs,
    nextAttemptAt: (delivery, failed) => delivery.createdAtMs + (retryOffsetsMs[failed - 1] ?? 0),
    headers: (record, signature) => mailDeliveryHeaders(vendor, record.event, signature, record.id),
    prepare(delivery: DeliveryContext, kind) {
      const webhook = webhooks.find(delivery.record.webhookId);
      if (!webhook) return { cancel: 'webhook deleted' };
      // email-service §3: nothing is sent while paused (test sends are probes, allowed).
      if (webhook.status === 'paused' && kind === 'scheduled') return { cancel: 'webhook paused' };
      // Signed with the current secret (re-signed only after a rotation).
      return base.signedAttempt(delivery, webhook.url, webhook.secret);
    },
    onSettled(delivery) {
      const webhook = webhooks.find(delivery.record.webhookId);
      if (!webhook) return;
      if (delivery.record.status === 'succeeded') webhook.consecutiveFailures = 0;
      else if (delivery.record.status === 'failed' && ++webhook.consecutiveFailures >= pauseAfter) {
        // email-service §3: 10 consecutive deliveries each failed all 3 attempts -> paused.
        webhooks.pause(webhook);
        for (const pending of base.log.list(webhook.id)) base.engine.cancel(pending);
        base.emit({
          type: 'webhook_paused',
          service: 'mail',
          at: base.clock.now(),
          webhookId: webhook.id,
          consecutiveFailures: webhook.consecutiveFailures,
        });
      }
    },
  });
  const fixtures = createFixtures({
    seed: options.seed === undefined ? undefined : `${options.seed}:fixtures`,
    now: base.clock.now,
    clientId,
  });

  function validated(event: string, payload: unknown): void {
    if (!validate) return;
    const schema = (
      mailPayloadSchemas as Record<
        string,
        { safeParse(v: unknown): { success: boolean; error?: { message: string } } }
      >
    )[event];
    const result = schema?.safeParse(payload);
    if (!result?.success) {
      throw new WebhookError(
        'invalid_payload',
        `Not a valid ${event} payload: ${result?.error?.message ?? 'unknown event'}`,
      );
    }
  }

  return {
    service: 'mail' as const,
    clock: base.clock,
    ...webhooks.api,
    onEvent: base.onEvent,
    /**
     * Emits `event` to every active webhook subscribed to it: the payload is a fixture with
     * `payload` applied (or `payload` itself with `{ fixture: false }`). Resolves after each
     * delivery's first attempt; retries run on the clock. Paused webhooks receive nothing. With no
     * webhook subscribed to `event` it resolves to `[]` and reports `no_subscriber` to `onEvent`, or
     * rejects with `webhook_not_found` under the `requireSubscriber` option.
     */
    async emit<N extends MailEventName>(
      event: N,
      payload?: Overrides<MailPayloadOf<N>>,
      emitOptions: { fixture?: boolean } = {},
    ): Promise<DeliveryRecord[]> {
      const body = emitOptions.fixture === false ? { ...payload } : fixtures.mail(event, payload);
      validated(event, body);
      let skipped = 0;
      const targets = webhooks.subscribed(event, (webhookId) => {
        skipped++;
        base.emit({
          type: 'skipped',
          service: 'mail',
          at: base.clock.now(),
          webhookId,
          event,
          reason: 'webhook paused',
        });
      });
      if (targets.length === 0 && skipped === 0) base.noSubscriber(event);
      return base.deliver(
        targets.map((w) => w.id),
        event,
        JSON.stringify(body),
      );
    },
    /** Attempt records of a webhook, newest first, kept 90 days (`GET /api/v1/webhooks/:id/deliveries`). */
    listDeliveries(webhookId: string): AttemptRecord[] {
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
    async retryDelivery(webhookId: string, deliveryId: string): Promise<AttemptRecord> {
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
    async sendTest(webhookId: string): Promise<DeliveryRecord> {
      webhooks.get(webhookId);
      const body = fixtures.mail('delivered', {
        message_id: `test_${base.nextId().slice(0, 8)}`,
        to: 'test@example.com',
      });
      return base.test(webhookId, 'delivered', JSON.stringify(body));
    },
  };
}

const byNewest = (a: AttemptRecord, b: AttemptRecord): number =>
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
