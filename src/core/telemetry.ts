/**
 * The tracing and metrics hook of a receiver (option `telemetry`). The pipeline names no tracing
 * library: `@svc/webhooks/otel` implements {@link Telemetry} with OpenTelemetry, and without the
 * option nothing here runs (the receive path is the same function as without it).
 */
import type { WebhookErrorCode } from '../shared/errors.js';
import { emit, errField, type LogSink } from './logger.js';
import type { Outcome } from './outcome.js';
import type { Verdict } from './verdict.js';

/**
 * Traces and metrics of a receiver (option `telemetry`): `createOtelTelemetry()` of
 * `@svc/webhooks/otel` makes one for OpenTelemetry; implement it to feed another tracer. The receiver
 * calls `trace` around each delivery (the request's whole path, or a hand-off job once its MAC
 * matched), `traceparent` when it writes a hand-off job, `outcome` once per delivery (as
 * `onOutcome`), and `deadLetter` when a hand-off worker dead-letters a job, each only while `enabled()`.
 * What a member throws is logged and never changes a verdict; `trace` must call `work` at most once
 * and settle once it settled.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createOtelTelemetry } from '@svc/webhooks/otel';
 *
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, telemetry: createOtelTelemetry() });
 * ```
 */
export interface Telemetry {
  /**
   * Whether it records anything now (for OpenTelemetry: whether an SDK is registered). Asked once per
   * delivery; while it is false the receiver calls none of the other members for that delivery, so a
   * telemetry without an SDK costs next to nothing.
   */
  enabled(): boolean;
  /**
   * Runs `work` (one delivery, to its verdict) inside a span: `operation` is `'process'` (direct mode,
   * a worker's job) or `'send'` (a hand-off receiver writing the job). A job's `traceparent` is the one
   * its receiver wrote, covered by the job's MAC; `event`, `deliveryId` and `attempt` are known at the
   * start of a job only.
   */
  trace(
    delivery: {
      readonly service: string;
      readonly operation: 'process' | 'send';
      readonly event?: string;
      readonly deliveryId?: string;
      readonly attempt?: number;
      readonly traceparent?: string;
    },
    work: () => Promise<Verdict>,
  ): Promise<unknown>;
  /** The W3C `traceparent` of the span active now, written into a hand-off job; undefined for none. */
  traceparent(): string | undefined;
  /** One delivery's outcome (what `onOutcome` gets). */
  outcome(outcome: Outcome): void;
  /** A hand-off worker dead-lettered a job (`code`: why its last run failed, when known). */
  deadLetter(facts: { readonly service: string; readonly code: WebhookErrorCode | undefined }): void;
}

/** The `trace` argument of {@link Telemetry}. */
export type TraceStart = Parameters<Telemetry['trace']>[0];

/**
 * A W3C trace-context `traceparent`, version 00: trace id and span id in lowercase hex, neither all
 * zeros, and the flags byte. 55 characters.
 */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** `value` when it is a valid `traceparent` (see {@link TRACEPARENT}), else undefined. */
export function validTraceparent(value: unknown): string | undefined {
  return typeof value === 'string' && value.length === 55 && TRACEPARENT.test(value) ? value : undefined;
}

/**
 * `work()` inside `telemetry.trace`, resolving with `work`'s own verdict whatever the telemetry does:
 * if `trace` throws or rejects, that is logged, and `work` still runs exactly once.
 */
export async function traced(
  telemetry: Telemetry,
  delivery: TraceStart,
  work: () => Promise<Verdict>,
  logger: LogSink | undefined,
): Promise<Verdict> {
  let running: Promise<Verdict> | undefined;
  try {
    await telemetry.trace(delivery, () => {
      running ??= work();
      return running;
    });
  } catch (error) {
    emit(logger, 'error', 'telemetry failed', { service: delivery.service, err: errField(error) });
  }
  return running ?? work();
}

/** `telemetry.enabled()`, false when it throws (logged). */
export function telemetryEnabled(
  telemetry: Telemetry,
  logger: LogSink | undefined,
  service: string,
): boolean {
  try {
    return telemetry.enabled() === true;
  } catch (error) {
    emit(logger, 'error', 'telemetry failed', { service, err: errField(error) });
    return false;
  }
}

/** The `traceparent` to write into a job, when the telemetry gives a valid one. Never throws. */
export function jobTraceparent(
  telemetry: Telemetry,
  logger: LogSink | undefined,
  service: string,
): string | undefined {
  if (!telemetryEnabled(telemetry, logger, service)) return undefined;
  try {
    return validTraceparent(telemetry.traceparent());
  } catch (error) {
    emit(logger, 'error', 'telemetry failed', { service, err: errField(error) });
    return undefined;
  }
}

/** Tells the telemetry a worker dead-lettered a job. Never throws. */
export function reportDeadLetter(
  telemetry: Telemetry,
  logger: LogSink | undefined,
  facts: { service: string; code: WebhookErrorCode | undefined },
): void {
  try {
    telemetry.deadLetter(facts);
  } catch (error) {
    emit(logger, 'error', 'telemetry failed', { service: facts.service, err: errField(error) });
  }
}
