import type { Clock } from '../../shared/clock.js';
import { signPayload } from '../../verify/sign-payload.js';
import { isoTime } from '../clock/iso-time.js';
import { performAttempt, type TransportOptions } from './attempt.js';
import type { AttemptKind, EmittedAttempt, EmittedDelivery, EmitterReport } from './types.js';

/** Where an attempt goes: the URL and the secret to sign with, or why it is not sent. */
export type PreparedAttempt = { url: string; secret: string } | { cancel: string };

/** A delivery as the engine holds it: the record, the signature cache and the pending timer. */
export interface LiveDelivery {
  record: EmittedDelivery;
  /**
   * The signed headers and the secret they were signed with: the body never changes, so the signature
   * (and the header object around it) is made again only after a rotation.
   */
  signed: { secret: string; headers: Record<string, string> } | undefined;
  createdAtMs: number;
  timer: unknown;
}

/** What a service tells the engine. */
export interface EngineConfig {
  service: 'mail' | 'crm';
  clock: Required<Clock>;
  transport: TransportOptions;
  /** Attempts of the automatic schedule. */
  maxAttempts: number;
  /** When attempt `failed + 1` runs (epoch ms), after attempt `failed` failed. */
  nextAttemptAt(delivery: LiveDelivery, failed: number): number;
  /** URL and current secret for the next attempt, or a reason to cancel (webhook paused, inactive, gone). */
  prepare(delivery: LiveDelivery, kind: AttemptKind): PreparedAttempt;
  /** The service's request headers of a delivery around its signature. */
  headers(record: EmittedDelivery, signature: string): Record<string, string>;
  /** A scheduled delivery reached `succeeded` or `failed`. */
  onSettled(delivery: LiveDelivery): void;
  /** Reports an event; a function is only called when someone listens (snapshots cost). */
  emit(event: EmitterReport | (() => EmitterReport)): void;
}

/** A copy of a delivery record that later attempts do not change. */
export function snapshot(record: EmittedDelivery): EmittedDelivery {
  return { ...record, attempts: record.attempts.map((a) => ({ ...a })) };
}

/**
 * Runs deliveries: the first attempt at once, then retries on the clock until one succeeds or the
 * attempts run out. Each attempt is prepared (signed) right before it is sent, so a rotated secret
 * or a paused webhook takes effect on the next attempt.
 */
export function createDeliveryEngine(config: EngineConfig) {
  const { service, clock, transport, maxAttempts } = config;

  /**
   * The headers of the next attempt, with the signature of the exact body under `secret`: signed when
   * the secret differs from the last attempt's (a rotation) and reused otherwise, since the same bytes
   * and secret give the same signature. Synchronous once signed.
   */
  function signed(
    delivery: LiveDelivery,
    secret: string,
  ): Record<string, string> | Promise<Record<string, string>> {
    if (delivery.signed?.secret === secret) return delivery.signed.headers;
    return signPayload(delivery.record.body, secret).then((signature) => {
      const headers = config.headers(delivery.record, signature);
      delivery.signed = { secret, headers };
      return headers;
    });
  }

  async function attempt(delivery: LiveDelivery, kind: AttemptKind): Promise<EmittedAttempt | null> {
    const prepared = config.prepare(delivery, kind);
    const record = delivery.record;
    if ('cancel' in prepared) {
      if (kind !== 'retry' && record.status === 'pending') {
        record.status = 'cancelled';
        record.nextAttemptAt = null;
        config.emit(() => ({
          type: 'delivery_settled',
          service,
          at: clock.now(),
          delivery: snapshot(record),
        }));
      }
      return null;
    }
    const pending = signed(delivery, prepared.secret);
    const headers = pending instanceof Promise ? await pending : pending;
    const attemptedAt = clock.now();
    const outcome = await performAttempt(clock, transport, prepared.url, headers, record.body);
    const entry: EmittedAttempt = {
      deliveryId: record.id,
      webhookId: record.webhookId,
      event: record.event,
      attempt: record.attempts.length + 1,
      kind,
      attemptedAt: isoTime(attemptedAt),
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      success: outcome.error === null,
      error: outcome.error,
      responseBody: outcome.responseBody,
    };
    record.attempts.push(entry);
    const settles = kind !== 'retry';
    if (entry.success) {
      record.status = 'succeeded';
    } else if (kind === 'scheduled' && record.attempts.length < maxAttempts) {
      const at = Math.max(clock.now(), config.nextAttemptAt(delivery, record.attempts.length));
      record.nextAttemptAt = isoTime(at);
      delivery.timer = clock.setTimeout(() => run(delivery), at - clock.now());
    } else if (settles) {
      record.status = 'failed';
    }
    if (record.status !== 'pending') record.nextAttemptAt = null;
    config.emit(() => ({
      type: 'attempt',
      service,
      at: clock.now(),
      delivery: snapshot(record),
      attempt: { ...entry },
    }));
    if (settles && record.status !== 'pending') {
      config.emit(() => ({ type: 'delivery_settled', service, at: clock.now(), delivery: snapshot(record) }));
      if (!record.test) config.onSettled(delivery);
    }
    return entry;
  }

  function run(delivery: LiveDelivery): Promise<EmittedAttempt | null> {
    delivery.timer = undefined;
    return attempt(delivery, 'scheduled');
  }

  return {
    /** Starts a delivery: the first attempt now (tracked by the clock), retries on timers. */
    start(delivery: LiveDelivery): Promise<EmittedAttempt | null> {
      return clock.track(run(delivery));
    },
    /** One manual attempt (retry or test) outside the schedule. */
    once(delivery: LiveDelivery, kind: AttemptKind): Promise<EmittedAttempt | null> {
      return clock.track(attempt(delivery, kind));
    },
    /** Stops the pending retries of a delivery. */
    cancel(delivery: LiveDelivery): void {
      if (delivery.timer !== undefined) clock.clearTimeout(delivery.timer);
      delivery.timer = undefined;
      if (delivery.record.status === 'pending') {
        delivery.record.status = 'cancelled';
        delivery.record.nextAttemptAt = null;
        config.emit(() => ({
          type: 'delivery_settled',
          service,
          at: clock.now(),
          delivery: snapshot(delivery.record),
        }));
      }
    },
  };
}
