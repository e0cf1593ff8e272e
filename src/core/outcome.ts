/**
 * What one delivery came to, for counting without parsing log lines: one {@link Outcome} per
 * delivery in direct mode, per hand-off at enqueue, and per job run in a worker, given to the
 * receiver's `onOutcome` and its `telemetry`. Nothing here runs unless one of them is set.
 */
import { type Clock, systemClock } from '../shared/clock.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import { type DeliveryFacts, type Lag, lagOf } from './lag.js';
import { emit, errField, type LogSink } from './logger.js';
import { truncateUntrusted } from './untrusted.js';
import type { Verdict } from './verdict.js';

/**
 * One delivery's outcome, given to the `onOutcome` option once per delivery: in direct mode, at
 * enqueue in hand-off mode, and for every job run in a hand-off worker. Plain data, for counters and
 * histograms of your own (the `./otel` entry records the same as OpenTelemetry metrics), with the
 * delivery's lag: `eventAgeMs` and `clockAhead` at receipt, `queueWaitMs` in a worker, `handlerMs`,
 * and `endToEndMs` once handled (docs/observability.md "Lag").
 *
 * @example
 * ```ts
 * import { createMailReceiver, type Outcome } from '@svc/webhooks';
 *
 * const onOutcome = ({ service, kind, code, durationMs, endToEndMs }: Outcome) => {
 *   metrics.histogram('webhooks.duration', durationMs, { service, kind, code: code ?? 'none' });
 *   if (endToEndMs !== undefined) metrics.histogram('webhooks.end_to_end', endToEndMs, { service });
 * };
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, onOutcome });
 * ```
 */
export interface Outcome {
  /** The receiver's service (`'mail'`, `'crm'`). */
  readonly service: string;
  /**
   * Where it was judged: `'direct'` (the handlers ran in the request), `'enqueue'` (a hand-off
   * receiver wrote the job, or could not: 503 `handoff_unavailable`), `'worker'` (a hand-off worker
   * ran the job).
   */
  readonly mode: 'direct' | 'enqueue' | 'worker';
  /** The event name, once the request got far enough to read it (cut to 128 characters). */
  readonly event: string | undefined;
  /** The delivery id, once known (cut to 128 characters: before the signature matched, anyone chose it). */
  readonly deliveryId: string | undefined;
  /** The verdict's kind: `handled`, `duplicate`, `ignored`, `queued`, `refused` or `failed`. */
  readonly kind: Verdict['kind'];
  /** The error code of a `refused` or `failed` verdict (`signature_mismatch`, `handler_failed`…). */
  readonly code: WebhookErrorCode | undefined;
  /**
   * Milliseconds from the request's arrival (a job's start, in a worker) to the verdict: the
   * receiver's `clock`, sub-millisecond (`performance.now()`) with the default one.
   */
  readonly durationMs: number;
  /** In a worker: the queue engine's attempt number of the job, from 1. */
  readonly attempt: number | undefined;
  /** Whether it was a copy of a delivery already handled (or a job already enqueued): nothing ran. */
  readonly duplicate: boolean;
  /**
   * Payload drift, at receipt only (not in a worker): the JSON paths of the payload its schema does
   * not know (`data.new_field`, arrays as `items[]`), or `['']` for an event this version does not
   * know; never values. Undefined when there was none (docs/observability-drift.md "Payload drift").
   */
  readonly drift?: readonly string[] | undefined;
  /**
   * Lag, at receipt (`direct`, `enqueue`): ms from the signed body's `timestamp` to the receipt (the
   * body read), 0 when the timestamp lies ahead. Undefined when the event carries no `timestamp` (the
   * email service shows it for opened, unsubscribed, clicked and some sending events; every CRM
   * envelope has one) or it did not verify and parse; never in a worker (counted once, at receipt).
   */
  readonly eventAgeMs?: number | undefined;
  /**
   * With `eventAgeMs`: whether the signed `timestamp` was ahead of this receiver's clock at receipt
   * (the sender's clock ahead, or this host's behind); `eventAgeMs` is then 0.
   */
  readonly clockAhead?: boolean | undefined;
  /**
   * Lag, in a worker: ms from the delivery's receipt (the time its hand-off job carries under the job's
   * MAC, or its inbox row) to the start of its handlers in this run, retries and backoff included;
   * undefined when no handler ran (a duplicate, a refused job). 0 when the worker's clock is behind.
   */
  readonly queueWaitMs?: number | undefined;
  /**
   * Ms the handlers ran: from the claim held (their start) to the verdict, on the receiver's `clock`;
   * undefined when none ran (and in the database inbox's direct mode, which runs them inside its write).
   */
  readonly handlerMs?: number | undefined;
  /**
   * Lag, for a `handled` verdict: ms from the signed body's `timestamp` to the verdict (direct mode,
   * or the worker's run); undefined without a `timestamp`, and for any other verdict.
   */
  readonly endToEndMs?: number | undefined;
  /** `true` when the payload failed its schema and the receiver's `repair` made it valid (at receipt, or a re-driven inbox row). */
  readonly repaired?: true | undefined;
}

const preciseNow = (): number => performance.now();

/** The time source of durations: the receiver's clock, or `performance.now()` for the wall clock. */
export function durationClock(clock: Clock): () => number {
  return clock === systemClock ? preciseNow : () => clock.now();
}

/**
 * The {@link Outcome} of `verdict`; with `facts` (what the delivery noted on its way), its drift and
 * its lag at `doneAt` (epoch ms of the receiver's clock).
 */
export function outcomeOf(
  verdict: Verdict,
  mode: Outcome['mode'],
  durationMs: number,
  attempt: number | undefined,
  facts?: DeliveryFacts,
  doneAt = 0,
): Outcome {
  const failure = verdict.kind === 'refused' || verdict.kind === 'failed';
  const drift = facts?.drift;
  const lag = facts ? lagOf(facts, mode, verdict.kind, doneAt) : NO_LAG;
  return {
    service: verdict.service,
    mode,
    event: truncateUntrusted(verdict.event),
    deliveryId: truncateUntrusted(verdict.deliveryId),
    kind: verdict.kind,
    code: failure ? verdict.code : undefined,
    durationMs,
    attempt,
    duplicate: verdict.kind === 'duplicate',
    ...(drift && { drift }),
    eventAgeMs: lag.eventAgeMs,
    clockAhead: lag.clockAhead,
    queueWaitMs: lag.queueWaitMs,
    handlerMs: lag.handlerMs,
    endToEndMs: lag.endToEndMs,
    ...(facts?.repaired && { repaired: true as const }),
  };
}

const NO_LAG: Lag = Object.freeze({});

/**
 * Gives `outcome` to `onOutcome` and to the telemetry (its `outcome` member). What either throws is
 * logged and dropped: it never changes the answer.
 */
export function reportOutcome(
  onOutcome: ((outcome: Outcome) => void) | undefined,
  telemetry: { outcome(outcome: Outcome): void } | undefined,
  logger: LogSink | undefined,
  outcome: Outcome,
): void {
  if (onOutcome) {
    try {
      onOutcome(outcome);
    } catch (error) {
      emit(logger, 'error', 'onOutcome threw', { service: outcome.service, err: errField(error) });
    }
  }
  if (telemetry) {
    try {
      telemetry.outcome(outcome);
    } catch (error) {
      emit(logger, 'error', 'telemetry failed', { service: outcome.service, err: errField(error) });
    }
  }
}
