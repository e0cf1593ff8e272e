/**
 * @module
 * `@svc/webhooks/otel`: OpenTelemetry traces and metrics for the receivers and hand-off workers
 * (docs/observability.md). Needs `@opentelemetry/api` (an optional peer dependency); nothing else of
 * the package imports it.
 */
export type { Telemetry } from '../core/telemetry.js';
export { createInboxMetrics, type InboxMetricsOptions } from './inbox-metrics.js';
export { createOtelTelemetry, type OtelTelemetryOptions } from './otel-telemetry.js';
