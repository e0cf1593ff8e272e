/**
 * The emulator's state: one email and one CRM emitter on the same (scaled) clock, the deliveries in
 * the order they were made, and listeners for the page's live updates.
 */

import type { EmitterClock } from '../../testing/clock/types.js';
import { createCrmEmitter } from '../../testing/emitter/crm-emitter.js';
import { createMailEmitter } from '../../testing/emitter/mail-emitter.js';
import type { EmittedDelivery, EmitterReport } from '../../testing/emitter/types.js';

/** What the page and `GET /_emulator/state` show. */
export interface EmulatorSnapshot {
  now: number;
  speed: number;
  webhooks: Array<Record<string, unknown> & { service: 'mail' | 'crm'; id: string }>;
  deliveries: Array<EmittedDelivery & { service: 'mail' | 'crm' }>;
}

/**
 * An attempt's duration in real milliseconds. The emitters measure it on their clock too, which at
 * `--speed x` runs x times as fast as the app under test: divided back, so the page shows real time.
 */
export function realDuration(durationMs: number, speed: number): number {
  return speed === 1 ? durationMs : Math.round(durationMs / speed);
}

function inRealTime(record: EmittedDelivery, speed: number): EmittedDelivery {
  if (speed === 1) return record;
  return {
    ...record,
    attempts: record.attempts.map((a) => ({ ...a, durationMs: realDuration(a.durationMs, speed) })),
  };
}

/** Deliveries shown (newest first); older ones stay in the emitters' own histories. */
const SHOWN = 200;

/** Both emitters and what the page needs. */
export function createEmulatorState(
  clock: EmitterClock,
  speed: number,
  options: { attemptTimeoutMs?: number } = {},
) {
  const listeners = new Set<(event: EmitterReport) => void>();
  const order: Array<{ service: 'mail' | 'crm'; id: string }> = [];
  const known = new Set<string>();
  const onEvent = (event: EmitterReport) => {
    if ((event.type === 'attempt' || event.type === 'delivery_settled') && !known.has(event.delivery.id)) {
      known.add(event.delivery.id);
      order.push({ service: event.service, id: event.delivery.id });
      if (order.length > SHOWN * 2) for (const old of order.splice(0, SHOWN)) known.delete(old.id);
    }
    for (const listener of listeners) listener(event);
  };
  // Aborted by stop(): an attempt in flight ends at once instead of holding the process up to 10 s.
  const stopping = new AbortController();
  const fetchUntilStopped: typeof fetch = (input, init) =>
    globalThis.fetch(input, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, stopping.signal]) : stopping.signal,
    });
  // Registered URLs are the developer's own apps on localhost: private networks are allowed.
  // The 10 s response limit stays real time whatever the speed: the app under test is not sped up.
  const common = {
    clock,
    allowPrivateNetworks: true,
    onEvent,
    attemptTimeoutMs: options.attemptTimeoutMs,
    fetch: fetchUntilStopped,
  };
  const mail = createMailEmitter(common);
  const crm = createCrmEmitter(common);

  return {
    mail,
    crm,
    speed,
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
    snapshot(): EmulatorSnapshot {
      const webhooks = [
        ...mail.listWebhooks().map((w) => ({ service: 'mail' as const, ...w })),
        ...crm.listWebhooks().map((w) => ({ service: 'crm' as const, ...w })),
      ];
      const deliveries: EmulatorSnapshot['deliveries'] = [];
      for (let i = order.length - 1; i >= 0 && deliveries.length < SHOWN; i--) {
        const { service, id } = order[i]!;
        try {
          deliveries.push({
            service,
            ...inRealTime((service === 'mail' ? mail : crm).getDelivery(id), speed),
          });
        } catch {
          // Deleted with its webhook, or past the retention: no longer shown.
        }
      }
      return { now: clock.now(), speed, webhooks, deliveries };
    },
  };
}

/** The emulator's state. */
export type EmulatorState = ReturnType<typeof createEmulatorState>;
