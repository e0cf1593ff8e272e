import type { Clock } from '../../shared/clock.js';
import type { UrlPolicyOptions } from '../url-policy.js';
import type { TransportOptions } from './attempt.js';

/**
 * Why an attempt was made: the automatic schedule, a manual retry, or a test send.
 *
 * @example
 * ```ts
 * const manual = emitter.listDeliveries(id).filter((a) => a.kind === 'retry');
 * ```
 *
 * @example
 * ```ts
 * import type { AttemptKind } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: AttemptKind): AttemptKind {
 *   return value;
 * }
 * ```
 */
export type AttemptKind = 'scheduled' | 'retry' | 'test';

/**
 * One attempt the emitter made, as the emulated service records it (email-service §6 rule 5,
 * crm-service §6 rule 6). Not the receiver's view: that is the handler's `context.attempt`.
 *
 * @example
 * ```ts
 * const [last]: EmittedAttempt[] = emitter.listDeliveries(webhookId); // newest first
 * if (last) console.log(last.attempt, last.statusCode, last.error);
 * ```
 */
export interface EmittedAttempt {
  deliveryId: string;
  webhookId: string;
  event: string;
  /** 1, 2, 3 for the automatic schedule; manual retries continue the count. */
  attempt: number;
  kind: AttemptKind;
  /** ISO 8601 UTC with milliseconds, on the emitter's clock. */
  attemptedAt: string;
  /** HTTP status; 0 when no response arrived (network error, reset, timeout). */
  statusCode: number;
  /**
   * Real milliseconds over the network, whatever the clock's speed; with an in-process `handler`,
   * the longer of real time and the emitter's clock (a handler may wait on a virtual clock).
   */
  durationMs: number;
  /** True for a 2xx within the time limit. */
  success: boolean;
  /** Why the attempt failed (`HTTP 500`, `redirect 302 not followed`, `timeout: …`, `fetch failed (ECONNRESET)`). */
  error: string | null;
  /** The start of the response body (up to 1 KiB). */
  responseBody: string | null;
}

/**
 * Where an emitted delivery stands on the sending side. `cancelled`: stopped before its attempts ran
 * out (paused, inactive, deleted).
 *
 * @example
 * ```ts
 * const status: EmittedDeliveryStatus = emitter.getDelivery(deliveryId).status; // 'failed' after 3 attempts
 * ```
 */
export type EmittedDeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/**
 * One delivery the emitter sent: one event to one webhook, with one delivery id across every attempt,
 * as the emulated service records it.
 *
 * @example
 * ```ts
 * const [delivery]: EmittedDelivery[] = await emitter.emit('opened'); // one per subscribed webhook
 * if (delivery) console.log(delivery.id, delivery.nextAttemptAt);
 * ```
 */
export interface EmittedDelivery {
  /** The delivery id (`X-SvcMAIL-Id` / `X-Svc-Delivery`). */
  id: string;
  webhookId: string;
  event: string;
  status: EmittedDeliveryStatus;
  /** ISO time the delivery was created (its first attempt). */
  createdAt: string;
  /** ISO time of the next scheduled attempt, or null. */
  nextAttemptAt: string | null;
  /** A synthetic test delivery (email `POST …/test`): one attempt, never counted towards pausing. */
  test: boolean;
  attempts: EmittedAttempt[];
  /** The exact body bytes sent, as text (identical for every attempt). */
  body: string;
}

/**
 * What an emitter reports to `onEvent` as it works (attempts, settled deliveries, pauses, skipped
 * events); the demo prints these as a timeline. Not a webhook event: those are `MailEvent` / `CrmEvent`.
 *
 * @example
 * ```ts
 * createMailEmitter({
 *   onEvent: (report: EmitterReport) => {
 *     if (report.type === 'webhook_paused') console.log('paused', report.webhookId);
 *   },
 * });
 * ```
 */
export type EmitterReport =
  | {
      type: 'attempt';
      service: 'mail' | 'crm';
      at: number;
      delivery: EmittedDelivery;
      attempt: EmittedAttempt;
    }
  | { type: 'delivery_settled'; service: 'mail' | 'crm'; at: number; delivery: EmittedDelivery }
  | { type: 'webhook_paused'; service: 'mail'; at: number; webhookId: string; consecutiveFailures: number }
  /** `emit()` of an event no webhook subscribes to (paused or inactive ones count as subscribed). */
  | { type: 'no_subscriber'; service: 'mail' | 'crm'; at: number; event: string }
  | {
      type: 'skipped';
      service: 'mail' | 'crm';
      at: number;
      webhookId: string;
      event: string;
      reason: string;
    };

/**
 * Options shared by both emitters.
 *
 * @example
 * ```ts
 * const options: EmitterOptions = { clock, seed: 1, allowPrivateNetworks: true };
 * createCrmEmitter(options);
 * ```
 *
 * @example
 * ```ts
 * import type { EmitterOptions } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: EmitterOptions): EmitterOptions {
 *   return value;
 * }
 * ```
 */
export interface EmitterOptions extends TransportOptions, UrlPolicyOptions {
  /**
   * The clock every attempt and retry is scheduled on, with every method of a `Clock` (timers, `sleep`,
   * `track`): `createVirtualClock()` or `createRealClock()`. Default: a new virtual clock.
   */
  clock?: Required<Clock>;
  /** Seed for ids, secrets and jitter; same seed, same run. Default: crypto randomness. */
  seed?: number | string;
  /** The vendor word that replaces "Svc" in header names and the User-Agent. Default `'Svc'`. */
  vendor?: string;
  /** Adds a random 0..jitterMs to each automatic retry. Default 0 (exact offsets). */
  jitterMs?: number;
  /** Called for every attempt, settled delivery, pause, skipped event and event without a subscriber. */
  onEvent?: (event: EmitterReport) => void;
  /**
   * Make `emit()` reject with `webhook_not_found` (404) when no webhook subscribes to the event,
   * instead of resolving to `[]`: catches a test whose webhook listens to other events. Webhooks that
   * subscribe but are paused or inactive still count (their events are reported as `skipped`).
   * Default `false`.
   */
  requireSubscriber?: boolean;
  /**
   * Event names a newer version of the service sends that this package does not know, to show payload
   * drift (docs/observability-drift.md "Payload drift"): webhooks may subscribe to them, and `emit()` sends
   * them with the payload as given (the email service's with its `event` field first; the CRM's as the
   * envelope's `data`), never validated. Default none.
   */
  newEvents?: readonly string[];
}
