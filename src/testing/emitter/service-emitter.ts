import { WebhookError } from '../../shared/errors.js';
import { isoTime } from '../clock/iso-time.js';
import { createVirtualClock } from '../clock/virtual-clock.js';
import { createFixtures } from '../fixtures/fixtures.js';
import { createRandom, randomInt, randomUuid } from '../random.js';
import { createDeliveryLog } from './delivery-log.js';
import { createDeliveryEngine, type LiveDelivery, snapshot } from './engine.js';
import type { EmitterSpec } from './specs.js';
import type { EmittedAttempt, EmittedDelivery, EmitterOptions, EmitterReport } from './types.js';
import { createWebhookRegistry, type StoredWebhook } from './webhook-registry.js';

/**
 * One service's sending side, driven by its {@link EmitterSpec}: fixtures and validation, the webhook
 * registry, deliveries signed with each webhook's current secret, the retry schedule, the delivery
 * log and the event listeners. `onSettled` sees every automatic delivery that succeeded or failed.
 * Creating and changing webhooks is left to each service (their fields differ).
 */
export function createServiceEmitter<W extends StoredWebhook>(
  spec: EmitterSpec<W>,
  options: EmitterOptions & { validate?: boolean },
  onSettled: (delivery: LiveDelivery, webhook: W) => void = () => {},
) {
  const { service } = spec;
  const {
    clock = createVirtualClock(),
    seed,
    jitterMs = 0,
    onEvent,
    requireSubscriber = false,
    validate = true,
    newEvents = [],
  } = options;
  const random = createRandom(seed);
  const listeners = new Set<(event: EmitterReport) => void>(onEvent ? [onEvent] : []);
  const log = createDeliveryLog({ now: () => clock.now(), ...spec.keep });
  const report = (event: EmitterReport | (() => EmitterReport)): void => {
    if (listeners.size === 0) return;
    const value = typeof event === 'function' ? event() : event;
    for (const listener of listeners) listener(value);
  };
  const cancelPending = (webhookId: string): void => {
    for (const delivery of log.list(webhookId)) engine.cancel(delivery);
  };
  const webhooks = createWebhookRegistry<W>(
    {
      clock,
      random,
      onDelete: (webhookId) => {
        for (const delivery of log.drop(webhookId)) engine.cancel(delivery);
      },
    },
    spec.receives,
  );
  const { delaysMs, from } = spec.retry;
  const engine = createDeliveryEngine({
    service,
    clock,
    transport: options,
    // email-service §8 and crm-service §8: 3 attempts per delivery.
    maxAttempts: 3,
    nextAttemptAt: (delivery, failed) =>
      // The first attempt's start, not the delivery's creation: signing comes in between.
      (from === 'first attempt start' ? Date.parse(delivery.record.attempts[0]!.attemptedAt) : clock.now()) +
      (delaysMs[failed - 1] ?? 0) +
      (jitterMs > 0 ? randomInt(random, 0, jitterMs) : 0),
    prepare(delivery, kind) {
      const webhook = webhooks.find(delivery.record.webhookId);
      if (!webhook) return { cancel: 'webhook deleted' };
      // Nothing is sent to a paused / inactive webhook (manual retries and test sends are probes).
      if (kind === 'scheduled' && !spec.receives(webhook)) return { cancel: spec.idleReason };
      // The current secret: after a rotation the old one stops at once.
      return { url: webhook.url, secret: webhook.secret };
    },
    onSettled(delivery) {
      const webhook = webhooks.find(delivery.record.webhookId);
      if (webhook) onSettled(delivery, webhook);
    },
    headers: spec.headers,
    emit: report,
  });
  const fixtures = createFixtures({
    seed: seed === undefined ? undefined : `${seed}:fixtures`,
    now: clock.now,
    ...spec.fixtures,
  });
  const nextId = (): string => randomUuid(random);

  function create(webhookId: string, event: string, body: (id: string) => string, test: boolean) {
    const id = nextId();
    const now = clock.now();
    const record: EmittedDelivery = {
      id,
      webhookId,
      event,
      status: 'pending',
      createdAt: isoTime(now),
      nextAttemptAt: null,
      test,
      attempts: [],
      body: body(id),
    };
    const delivery: LiveDelivery = { record, signed: undefined, createdAtMs: now, timer: undefined };
    log.add(delivery);
    return delivery;
  }

  /** A fixture of `event` with `overrides` (or `overrides` alone), validated unless told not to. */
  function payloadOf(
    event: string,
    overrides: Record<string, unknown> | undefined,
    fixture: boolean,
  ): object {
    // An event of a newer service (`newEvents`): no fixture, no schema; the email body names its event.
    if (newEvents.includes(event) && !Object.hasOwn(spec.schemas, event))
      return service === 'mail' ? { event, ...overrides } : { ...overrides };
    const payload = fixture ? spec.payload(fixtures, event, overrides) : { ...overrides };
    const result = validate ? spec.schemas[event]?.safeParse(payload) : { success: true };
    if (!result?.success) {
      throw new WebhookError(
        'invalid_payload',
        `${spec.invalid(event)}: ${result?.error?.message ?? 'unknown event'}`,
      );
    }
    return payload;
  }

  return {
    service,
    clock,
    log,
    webhooks,
    cancelPending,
    nextId,
    fixtures,
    report,
    /** Subscribes to attempts, settled deliveries, pauses and skipped events; returns an unsubscribe. */
    onEvent(listener: (event: EmitterReport) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Sends `event` to every webhook that receives it: one delivery each, resolved after each first attempt. */
    async emit(
      event: string,
      overrides: Record<string, unknown> | undefined,
      emitOptions: { fixture?: boolean } = {},
    ): Promise<EmittedDelivery[]> {
      const payload = payloadOf(event, overrides, emitOptions.fixture !== false);
      const timestamp = isoTime(clock.now());
      let skipped = 0;
      const targets = webhooks.subscribed(event, (webhookId) => {
        skipped++;
        report({ type: 'skipped', service, at: clock.now(), webhookId, event, reason: spec.idleReason });
      });
      if (targets.length === 0 && skipped === 0) {
        report(() => ({ type: 'no_subscriber', service, at: clock.now(), event }));
        if (requireSubscriber) {
          throw new WebhookError(
            'webhook_not_found',
            `No ${service} webhook subscribes to "${event}", so emit() sent nothing; create one with events: ["${event}"] (or leave requireSubscriber off).`,
          );
        }
      }
      const body = (id: string): string => spec.body(payload, { id, event, timestamp });
      const deliveries = targets.map((w) => create(w.id, event, body, false));
      await Promise.all(deliveries.map((d) => engine.start(d)));
      return deliveries.map((d) => snapshot(d.record));
    },
    /** One attempt of a new delivery outside the schedule (a test send): no retries, never counted. */
    async test(webhookId: string, event: string, payload: object): Promise<EmittedDelivery> {
      const timestamp = isoTime(clock.now());
      const delivery = create(webhookId, event, (id) => spec.body(payload, { id, event, timestamp }), true);
      await engine.once(delivery, 'test');
      return snapshot(delivery.record);
    },
    /** One more attempt of a recorded delivery (a manual retry), same id and bytes. */
    async retry(webhookId: string, deliveryId: string): Promise<EmittedAttempt> {
      const attempt = await engine.once(log.get(deliveryId, webhookId), 'retry');
      if (!attempt) throw new WebhookError('webhook_not_found', `Webhook ${webhookId} no longer exists.`);
      return attempt;
    },
    /** One delivery with all its attempts, or `delivery_not_found`. */
    getDelivery(deliveryId: string): EmittedDelivery {
      return snapshot(log.get(deliveryId).record);
    },
  };
}
