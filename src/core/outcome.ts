/**
 * What one delivery came to, for counting without parsing log lines: one {@link Outcome} per
 * delivery in direct mode, per hand-off at enqueue, and per job run in a worker, given to the
 * receiver's `onOutcome` and its `telemetry`. Nothing here runs unless one of them is set.
 */
import { type Clock, systemClock } from '../shared/clock.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import { emit, errField, type LogSink } from './logger.js';
import { truncateUntrusted } from './untrusted.js';
import type { Verdict } from './verdict.js';

/**
 * One delivery's outcome, given to the `onOutcome` option once per delivery: in direct mode, at
 * enqueue in hand-off mode, and for every job run in a hand-off worker. Plain data, for counters and
 * histograms of your own (the `./otel` entry records the same as OpenTelemetry metrics).
 *
 * @example
 * ```ts
 * import { createMailReceiver, type Outcome } from '@svc/webhooks';
 *
 * const onOutcome = ({ service, kind, code, durationMs }: Outcome) =>
 *   metrics.histogram('webhooks.duration', durationMs, { service, kind, code: code ?? 'none' });
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
   * know; never values. Undefined when there was none (docs/observability.md "Payload drift").
   */
  readonly drift?: readonly string[] | undefined;
  /** `true` when the payload failed its schema and the receiver's `repair` made it valid (at receipt, or a re-driven inbox row). */
  readonly repaired?: true | undefined;
}

const preciseNow = (): number => performance.now();

/** The time source of durations: the receiver's clock, or `performance.now()` for the wall clock. */
export function durationClock(clock: Clock): () => number {
  return clock === systemClock ? preciseNow : () => clock.now();
}

/** The {@link Outcome} of `verdict`. */
export function outcomeOf(
  verdict: Verdict,
  mode: Outcome['mode'],
  durationMs: number,
  attempt: number | undefined,
  drift?: readonly string[],
  repaired?: true,
): Outcome {
  const failure = verdict.kind === 'refused' || verdict.kind === 'failed';
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
    ...(repaired && { repaired }),
  };
}

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
