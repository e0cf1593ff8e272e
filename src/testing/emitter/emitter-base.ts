import { WebhookError } from '../../shared/errors.js';
import { signPayload } from '../../verify/sign-payload.js';
import { isoTime } from '../clock/iso-time.js';
import type { SchedulerClock } from '../clock/types.js';
import { createVirtualClock } from '../clock/virtual-clock.js';
import { createRandom, randomInt, randomUuid } from '../random.js';
import { createDeliveryLog } from './delivery-log.js';
import {
  createDeliveryEngine,
  type EngineConfig,
  type LiveDelivery,
  type PreparedAttempt,
  snapshot,
} from './engine.js';
import type { AttemptKind, AttemptRecord, DeliveryRecord, EmitterEvent, EmitterOptions } from './types.js';

/** A delivery as services see it in `prepare`. */
export type DeliveryContext = LiveDelivery;

interface BaseConfig {
  service: 'mail' | 'crm';
  options: EmitterOptions;
  retentionMs?: number;
  keepPerWebhook?: number;
  nextAttemptAt(delivery: LiveDelivery, failed: number): number;
  /** The service's request headers of a delivery around `signature`. */
  headers(record: DeliveryRecord, signature: string): Record<string, string>;
  prepare: EngineConfig['prepare'];
  onSettled(delivery: LiveDelivery): void;
}

/** What both emitters share: clock, ids, the delivery log, the engine and the event listeners. */
export function createEmitterBase(config: BaseConfig) {
  const { service, options } = config;
  const {
    clock = createVirtualClock() as SchedulerClock,
    seed,
    jitterMs = 0,
    onEvent,
    requireSubscriber = false,
  } = options;
  // email-service §8 and crm-service §8: 3 attempts per delivery.
  const maxAttempts = 3;
  const random = createRandom(seed);
  const listeners = new Set<(event: EmitterEvent) => void>(onEvent ? [onEvent] : []);
  const log = createDeliveryLog({
    now: () => clock.now(),
    ...(config.retentionMs !== undefined ? { retentionMs: config.retentionMs } : {}),
    ...(config.keepPerWebhook !== undefined ? { keepPerWebhook: config.keepPerWebhook } : {}),
  });
  const emit = (event: EmitterEvent | (() => EmitterEvent)): void => {
    if (listeners.size === 0) return;
    const value = typeof event === 'function' ? event() : event;
    for (const listener of listeners) listener(value);
  };
  const engine = createDeliveryEngine({
    service,
    clock,
    transport: options,
    maxAttempts,
    nextAttemptAt: (delivery, failed) =>
      config.nextAttemptAt(delivery, failed) + (jitterMs > 0 ? randomInt(random, 0, jitterMs) : 0),
    prepare: (delivery, kind) => config.prepare(delivery, kind),
    onSettled: (delivery) => config.onSettled(delivery),
    emit,
  });
  const nextId = (): string => randomUuid(random);

  function create(
    webhookId: string,
    event: string,
    body: string | ((id: string) => string),
    test: boolean,
  ): LiveDelivery {
    const id = nextId();
    const text = typeof body === 'string' ? body : body(id);
    const now = clock.now();
    const record: DeliveryRecord = {
      id,
      webhookId,
      event,
      status: 'pending',
      createdAt: isoTime(now),
      nextAttemptAt: null,
      test,
      attempts: [],
      body: text,
    };
    const delivery: LiveDelivery = {
      record,
      signed: undefined,
      createdAtMs: now,
      timer: undefined,
    };
    log.add(delivery);
    return delivery;
  }

  return {
    clock,
    random,
    log,
    engine,
    emit,
    nextId,
    /**
     * The next attempt of `delivery` to `url`, with the signature of its exact body under `secret`:
     * signed when the secret differs from the last attempt's (a rotation) and reused otherwise, since
     * the same bytes and secret give the same signature. Synchronous once signed.
     */
    signedAttempt(
      delivery: LiveDelivery,
      url: string,
      secret: string,
    ): PreparedAttempt | Promise<PreparedAttempt> {
      if (delivery.signed?.secret === secret) return { url, headers: delivery.signed.headers };
      return signPayload(delivery.record.body, secret).then((signature) => {
        const headers = config.headers(delivery.record, signature);
        delivery.signed = { secret, headers };
        return { url, headers };
      });
    },
    /** Subscribes to attempts, settled deliveries, pauses and skipped events; returns an unsubscribe. */
    onEvent(listener: (event: EmitterEvent) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /**
     * Reports an `emit()` that reached no webhook because none subscribes to `event`: an event to
     * `onEvent`, and with `requireSubscriber` a `webhook_not_found` error.
     */
    noSubscriber(event: string): void {
      emit(() => ({ type: 'no_subscriber', service, at: clock.now(), event }));
      if (requireSubscriber) {
        throw new WebhookError(
          'webhook_not_found',
          `No ${service} webhook subscribes to "${event}", so emit() sent nothing; create one with events: ["${event}"] (or leave requireSubscriber off).`,
        );
      }
    },
    /** One delivery per webhook (each its own id); resolves after every first attempt. */
    async deliver(
      webhookIds: string[],
      event: string,
      body: string | ((id: string) => string),
    ): Promise<DeliveryRecord[]> {
      const deliveries = webhookIds.map((id) => create(id, event, body, false));
      await Promise.all(deliveries.map((d) => engine.start(d)));
      return deliveries.map((d) => snapshot(d.record));
    },
    async test(webhookId: string, event: string, body: string): Promise<DeliveryRecord> {
      const delivery = create(webhookId, event, body, true);
      await engine.once(delivery, 'test');
      return snapshot(delivery.record);
    },
    async retry(webhookId: string, deliveryId: string, kind: AttemptKind = 'retry'): Promise<AttemptRecord> {
      const delivery = log.get(deliveryId, webhookId);
      const attempt = await engine.once(delivery, kind);
      if (!attempt) throw new WebhookError('webhook_not_found', `Webhook ${webhookId} no longer exists.`);
      return attempt;
    },
    /** One delivery with all its attempts, or `delivery_not_found`. */
    getDelivery(deliveryId: string): DeliveryRecord {
      return snapshot(log.get(deliveryId).record);
    },
    /** Cancels pending retries and forgets the deliveries of a deleted webhook. */
    drop(webhookId: string): void {
      for (const delivery of log.drop(webhookId)) engine.cancel(delivery);
    },
  };
}
