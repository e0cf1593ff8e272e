/**
 * The emulator's state: one email and one CRM emitter on the same (scaled) clock, the deliveries in
 * the order they were made, each attempt's request and answer, and listeners for the page's live
 * updates.
 */

import type { Clock } from '../../shared/clock.js';
import { WebhookError } from '../../shared/errors.js';
import { createCrmEmitter } from '../../testing/emitter/crm-emitter.js';
import { createMailEmitter } from '../../testing/emitter/mail-emitter.js';
import type { EmittedAttempt, EmittedDelivery, EmitterReport } from '../../testing/emitter/types.js';
import { receiverError } from '../receiver-error.js';
import { createExchangeLog, EXCHANGE_LIMITS, type Exchange } from './exchanges.js';

type Service = 'mail' | 'crm';

/** An attempt as the page shows it: wall time beside emulated time, the app's error code (durations are real time). */
export type ShownAttempt = EmittedAttempt & { wallAt: string; errorCode: string | null };

/** A delivery as the page lists it (its body is in the inspector's {@link DeliveryDetail}). */
export type ShownDelivery = Omit<EmittedDelivery, 'body' | 'attempts'> & {
  service: Service;
  createdWallAt: string;
  nextAttemptWallAt: string | null;
  attempts: ShownAttempt[];
};

/** What the page and `GET /_emulator/state` show. */
export interface EmulatorSnapshot {
  now: number;
  /** The wall-clock time of `now`. */
  wallNow: number;
  speed: number;
  webhooks: Array<Record<string, unknown> & { service: Service; id: string }>;
  deliveries: ShownDelivery[];
}

/** One delivery for the inspector: each attempt with its request and answer, when still kept. */
export type DeliveryDetail = ShownDelivery & {
  attempts: Array<ShownAttempt & { exchange: Exchange | null }>;
};

/** Deliveries shown (newest first); older ones stay in the emitters' own histories. */
const SHOWN = 200;

/** Both emitters and what the page needs; `clock.wall` turns an emulated time into wall time. */
export function createEmulatorState(
  clock: Required<Clock> & { wall(ms: number): number },
  speed: number,
  options: { attemptTimeoutMs?: number; newEvents?: Partial<Record<Service, readonly string[]>> } = {},
) {
  // Events of a newer service (`emulate --new-event`): webhooks subscribe to them, `trigger` sends them.
  const newEvents = { mail: options.newEvents?.mail ?? [], crm: options.newEvents?.crm ?? [] };
  const listeners = new Set<(event: EmitterReport) => void>();
  const order: Array<{ service: Service; id: string }> = [];
  const known = new Set<string>();
  // Aborted by stop(): an attempt in flight ends at once instead of holding the process up to 10 s.
  const stopping = new AbortController();
  const fetchUntilStopped: typeof fetch = (input, init) =>
    globalThis.fetch(input, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, stopping.signal]) : stopping.signal,
    });
  const exchanges = createExchangeLog(
    fetchUntilStopped,
    (headers) => headers.get('x-svcmail-id') ?? headers.get('x-svc-delivery'),
    EXCHANGE_LIMITS,
  );
  const onEvent = (event: EmitterReport) => {
    if (event.type === 'attempt') exchanges.file(event.delivery.id, event.attempt.attempt);
    if ((event.type === 'attempt' || event.type === 'delivery_settled') && !known.has(event.delivery.id)) {
      known.add(event.delivery.id);
      order.push({ service: event.service, id: event.delivery.id });
      if (order.length > SHOWN * 2) for (const old of order.splice(0, SHOWN)) known.delete(old.id);
    }
    for (const listener of listeners) listener(event);
  };
  // Registered URLs are the developer's own apps on localhost: private networks are allowed.
  // The 10 s response limit stays real time whatever the speed: the app under test is not sped up.
  const common = {
    clock,
    allowPrivateNetworks: true,
    onEvent,
    attemptTimeoutMs: options.attemptTimeoutMs,
    fetch: exchanges.fetch,
  };
  const mail = createMailEmitter({ ...common, newEvents: newEvents.mail });
  const crm = createCrmEmitter({ ...common, newEvents: newEvents.crm });
  const wallIso = (iso: string): string => new Date(clock.wall(Date.parse(iso))).toISOString();

  /** An attempt with its wall time and the app's error code. */
  function shownAttempt(attempt: EmittedAttempt): ShownAttempt {
    return {
      ...attempt,
      wallAt: wallIso(attempt.attemptedAt),
      errorCode: attempt.success ? null : (receiverError(attempt.responseBody)?.code ?? null),
    };
  }

  function shown(service: Service, record: EmittedDelivery): ShownDelivery {
    const { body: _body, ...rest } = record;
    return {
      ...rest,
      service,
      createdWallAt: wallIso(record.createdAt),
      nextAttemptWallAt: record.nextAttemptAt ? wallIso(record.nextAttemptAt) : null,
      attempts: record.attempts.map(shownAttempt),
    };
  }

  /** The delivery of either service with this id, or `delivery_not_found`. */
  function find(deliveryId: string): { service: Service; record: EmittedDelivery } {
    for (const [service, emitter] of [
      ['mail', mail],
      ['crm', crm],
    ] as const) {
      try {
        return { service, record: emitter.getDelivery(deliveryId) };
      } catch {
        // Not this service's.
      }
    }
    throw new WebhookError('delivery_not_found', `No delivery with id ${deliveryId} is kept.`);
  }

  return {
    mail,
    crm,
    newEvents,
    speed,
    clock,
    /**
     * Stops sending: attempts in flight are aborted and nothing more is reported. Stop the clock too,
     * so scheduled retries never fire.
     */
    stop(): void {
      listeners.clear();
      stopping.abort();
    },
    /** Subscribes to every attempt, settled delivery, pause and skip; returns an unsubscribe. */
    subscribe(listener: (event: EmitterReport) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** An attempt as the page and the terminal show it. */
    shownAttempt,
    snapshot(): EmulatorSnapshot {
      const webhooks = [
        ...mail.listWebhooks().map((w) => ({ service: 'mail' as const, ...w })),
        ...crm.listWebhooks().map((w) => ({ service: 'crm' as const, ...w })),
      ];
      const deliveries: ShownDelivery[] = [];
      for (let i = order.length - 1; i >= 0 && deliveries.length < SHOWN; i--) {
        const { service, id } = order[i]!;
        try {
          deliveries.push(shown(service, (service === 'mail' ? mail : crm).getDelivery(id)));
        } catch {
          // Deleted with its webhook, or past the retention: no longer shown.
        }
      }
      const now = clock.now();
      return { now, wallNow: clock.wall(now), speed, webhooks, deliveries };
    },
    /** One delivery with each attempt's request and answer (`delivery_not_found` when gone). */
    detail(deliveryId: string): DeliveryDetail {
      const { service, record } = find(deliveryId);
      const delivery = shown(service, record);
      return {
        ...delivery,
        attempts: delivery.attempts.map((a) => ({
          ...a,
          exchange: exchanges.get(record.id, a.attempt) ?? null,
        })),
      };
    },
  };
}

/** The emulator's state. */
export type EmulatorState = ReturnType<typeof createEmulatorState>;
