/**
 * One span per delivery, per the messaging semantic conventions: `process` (kind CONSUMER) when
 * handlers run here, `send` (kind PRODUCER) when a hand-off receiver writes the job, whose trace
 * context goes into the job as a W3C `traceparent`; a worker's `process` span continues that trace and
 * links to the `send` span. The delivery's work runs inside the span, so handlers' spans nest in it.
 */
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { errField } from '../core/logger.js';
import { type TraceStart, validTraceparent } from '../core/telemetry.js';
import { truncateUntrusted } from '../core/untrusted.js';
import type { Verdict } from '../core/verdict.js';
import { escapeUnsafe } from '../shared/control-chars.js';
import { ATTR } from './names.js';

/** A sender-chosen value as an attribute: bounded, its control characters as visible escapes. */
function untrusted(value: string): string;
function untrusted(value: string | undefined): string | undefined;
function untrusted(value: string | undefined): string | undefined {
  return value === undefined ? undefined : escapeUnsafe(truncateUntrusted(value));
}

/** The span context a job's (validated) `traceparent` names. */
function remoteSpanContext(traceparent: string | undefined): SpanContext | undefined {
  if (validTraceparent(traceparent) === undefined) return undefined;
  const value = traceparent!;
  return {
    traceId: value.slice(3, 35),
    spanId: value.slice(36, 52),
    traceFlags: Number.parseInt(value.slice(53, 55), 16),
    isRemote: true,
  };
}

/** The `traceparent` of the span context active now; undefined when there is none. */
export function activeTraceparent(): string | undefined {
  const active = trace.getSpanContext(context.active());
  if (!active || !isSpanContextValid(active)) return undefined;
  return `00-${active.traceId}-${active.spanId}-${(active.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Spans of one tracer, while `tracing()` (a tracer provider is there). The attributes known when a
 * request starts (service and operation) are one frozen object per service and operation, so a
 * request allocates nothing for them; a span that neither records nor carries a context (dropped by
 * the SDK's sampler at the root) leaves the work to run as it would without.
 */
export function createSpans(
  tracer: Tracer,
  eventName: (name: string | undefined) => string | undefined,
  tracing: () => boolean,
): (start: TraceStart, work: () => Promise<Verdict>) => Promise<Verdict> {
  // A request's start is one frozen object per receiver (src/receiver/observe.ts): its attributes too.
  const requestAttributes = new WeakMap<TraceStart, Attributes>();

  function attributesOf(start: TraceStart): Attributes {
    const { service, operation, event, deliveryId, attempt } = start;
    if (event === undefined && deliveryId === undefined && attempt === undefined) {
      let shared = requestAttributes.get(start);
      if (!shared) {
        shared = Object.freeze({
          [ATTR.system]: service,
          [ATTR.operationType]: operation,
          [ATTR.operationName]: operation,
        });
        requestAttributes.set(start, shared);
      }
      return shared;
    }
    const attributes: Attributes = {
      [ATTR.system]: service,
      [ATTR.operationType]: operation,
      [ATTR.operationName]: operation,
    };
    const name = eventName(untrusted(event));
    if (name !== undefined) attributes[ATTR.destination] = name;
    if (deliveryId !== undefined) attributes[ATTR.messageId] = untrusted(deliveryId);
    if (attempt !== undefined) attributes[ATTR.attempt] = attempt;
    return attributes;
  }

  /** The verdict's facts on the span, then its end. */
  function finish(span: Span, start: TraceStart, verdict: Verdict): void {
    if (span.isRecording()) {
      const attributes: Attributes = { [ATTR.verdict]: verdict.kind };
      if (start.event === undefined) {
        const name = eventName(untrusted(verdict.event));
        if (name !== undefined) {
          attributes[ATTR.destination] = name;
          span.updateName(`${start.operation} ${name}`);
        }
      }
      if (start.deliveryId === undefined && verdict.deliveryId !== undefined)
        attributes[ATTR.messageId] = untrusted(verdict.deliveryId);
      if (verdict.kind === 'refused' || verdict.kind === 'failed') attributes[ATTR.errorType] = verdict.code;
      if (verdict.kind === 'failed') {
        // A refusal is the sender's (or the queue writer's) doing; a failure is this receiver's.
        span.recordException(errField(verdict.error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: verdict.code });
      }
      span.setAttributes(attributes);
    }
    span.end();
  }

  return function traceDelivery(start, work) {
    // Metrics without traces: no span to make.
    if (!tracing()) return work();
    const remote = remoteSpanContext(start.traceparent);
    const active = context.active();
    const parent: Context = remote ? trace.setSpanContext(active, remote) : active;
    const name =
      start.event === undefined ? start.operation : `${start.operation} ${eventName(untrusted(start.event))}`;
    const span = tracer.startSpan(
      name,
      {
        kind: start.operation === 'send' ? SpanKind.PRODUCER : SpanKind.CONSUMER,
        attributes: attributesOf(start),
        ...(remote ? { links: [{ context: remote }] } : {}),
      },
      parent,
    );
    // No SDK (or no context to carry): run the work as it would run without telemetry.
    if (!span.isRecording() && !isSpanContextValid(span.spanContext())) return work();
    return context.with(trace.setSpan(parent, span), work).then(
      (verdict) => {
        finish(span, start, verdict);
        return verdict;
      },
      (error: unknown) => {
        span.recordException(errField(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  };
}
