/**
 * `createOtelTelemetry`: the receiver's {@link Telemetry} over the OpenTelemetry API, which is an
 * optional peer: only this entry imports it, and without a registered SDK its calls are the API's
 * no-ops (docs/observability.md).
 */
import { type MeterProvider, ProxyTracerProvider, type TracerProvider, trace } from '@opentelemetry/api';
import type { Telemetry } from '../core/telemetry.js';
import { createMeters } from './meters.js';
import { eventNames, SCOPE, SCOPE_VERSION } from './names.js';
import { activeTraceparent, createSpans } from './spans.js';

/** The API's no-op tracer provider: the delegate of its global proxy while no SDK registered one. */
const NO_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Options of {@link createOtelTelemetry}. By default the globally registered providers are used
 * (`NodeSDK.start()`, `provider.register()`), also when they are registered after the receiver was
 * created.
 *
 * @example
 * ```ts
 * import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
 * import { createOtelTelemetry, type OtelTelemetryOptions } from '@svc/webhooks/otel';
 *
 * const options: OtelTelemetryOptions = { tracerProvider: new BasicTracerProvider() };
 * const telemetry = createOtelTelemetry(options);
 * ```
 */
export interface OtelTelemetryOptions {
  /** The tracer provider of the spans. Default: the global one (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** The meter provider of the metrics. Default: the global one (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
}

/**
 * OpenTelemetry for a receiver (option `telemetry`): one span per delivery following the messaging
 * semantic conventions (`process`, kind CONSUMER, under the active HTTP server span; `send`, kind
 * PRODUCER, at a hand-off receiver, whose trace context the job carries to the worker's `process`
 * span), handlers running inside it, and the metrics `messaging.process.duration`,
 * `svc_webhooks.deliveries`, `svc_webhooks.dead_letters` and the lag histograms
 * (`svc_webhooks.event.age`, `.queue.wait`, `.handler.duration`, `.end_to_end.duration`). Needs `@opentelemetry/api` (an optional
 * peer); give the same one to the receiving process and to the workers. Names and alerts:
 * docs/observability.md.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createOtelTelemetry } from '@svc/webhooks/otel';
 *
 * const receiver = createMailReceiver({
 *   secret: process.env.SVC_MAIL_WEBHOOK_SECRET!,
 *   telemetry: createOtelTelemetry(),
 * }).on('bounced', async (event) => suppress(event.payload.to)); // its spans nest under `process bounced`
 * ```
 */
export function createOtelTelemetry(options: OtelTelemetryOptions = {}): Telemetry {
  const { tracerProvider, meterProvider } = options;
  const tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE, SCOPE_VERSION);
  /** Whether spans go anywhere: a provider was given, or an SDK registered a global one. */
  const tracing = (): boolean => {
    if (tracerProvider) return true;
    const global = trace.getTracerProvider();
    return !(global instanceof ProxyTracerProvider) || global.getDelegate() !== NO_TRACER_PROVIDER;
  };
  // One bound on distinct event names for both spans and metrics of this telemetry.
  const eventName = eventNames();
  const meters = createMeters(meterProvider, eventName);
  return {
    enabled: () => tracing() || meters.recording(),
    trace: createSpans(tracer, eventName, tracing),
    traceparent: activeTraceparent,
    outcome: meters.outcome,
    deadLetter: meters.deadLetter,
  };
}
