/**
 * The names the OpenTelemetry entry writes: the messaging semantic conventions where they apply
 * (https://opentelemetry.io/docs/specs/semconv/messaging/), `svc_webhooks.*` for the rest. Listed in
 * docs/observability.md; a rename is a breaking change for every dashboard built on them.
 */

/** The instrumentation scope of the tracer and the meter. */
export const SCOPE = '@svc/webhooks';

declare const __CLI_VERSION__: string;
/** The package version (set by the build; the sources run as 0.0.0). */
export const SCOPE_VERSION = typeof __CLI_VERSION__ === 'string' ? __CLI_VERSION__ : '0.0.0';

export const ATTR = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  errorType: 'error.type',
  verdict: 'svc_webhooks.verdict',
  attempt: 'svc_webhooks.attempt',
  inboxStatus: 'svc_webhooks.inbox.status',
  inboxName: 'svc_webhooks.inbox.name',
  driftPath: 'svc_webhooks.drift.path',
  clockAhead: 'svc_webhooks.clock_ahead',
} as const;

export const METRIC = {
  /** Histogram, seconds: the messaging semantic conventions' processing duration. */
  processDuration: 'messaging.process.duration',
  /** Counter: every delivery's outcome. */
  deliveries: 'svc_webhooks.deliveries',
  /** Counter: hand-off jobs a worker dead-lettered. */
  deadLetters: 'svc_webhooks.dead_letters',
  /** Counter: payload paths (and events) this version does not know, per delivery. */
  drift: 'svc_webhooks.drift',
  /** Histogram, seconds: the signed body `timestamp` → receipt (core/lag.ts). */
  eventAge: 'svc_webhooks.event.age',
  /** Histogram, seconds: receipt → the handlers' start in a worker. */
  queueWait: 'svc_webhooks.queue.wait',
  /** Histogram, seconds: the handlers' start → the verdict. */
  handlerDuration: 'svc_webhooks.handler.duration',
  /** Histogram, seconds: the signed body `timestamp` → handled. */
  endToEnd: 'svc_webhooks.end_to_end.duration',
} as const;

/** The gauges of a database inbox's depth (inbox-metrics.ts). */
export const INBOX_METRIC = {
  /** Gauge: rows by status. */
  rows: 'svc_webhooks.inbox.rows',
  /** Gauge, seconds: since the receipt of the oldest pending row. */
  oldestPendingAge: 'svc_webhooks.inbox.oldest_pending_age',
  /** Gauge: quarantined rows. */
  quarantined: 'svc_webhooks.inbox.quarantined',
} as const;

/** The messaging conventions' recommended buckets of `messaging.process.duration`, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * Buckets of the lag histograms, in seconds: 10 ms to 3 days. Fine below a minute (a worker keeping
 * up, a handler's run), then the spans of the senders' retries (email: +1 and +2 minutes; a paused
 * webhook resent hours later) and of a backlog drained after an outage.
 */
export const LAG_BUCKETS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1_800, 3_600, 7_200, 21_600, 86_400,
  259_200,
];

/** Distinct event names used in span names and metric attributes before the rest become `_other`. */
const MAX_EVENT_NAMES = 100;

/**
 * A bounded set of event names for span names and metric attributes. The email service signs the
 * body only, so a replayed body can arrive under any `X-SvcMAIL-Event` name (docs/security.md):
 * without a bound, such requests would each make a new time series.
 */
export function eventNames(): (name: string | undefined) => string | undefined {
  const seen = new Set<string>();
  return (name) => {
    if (name === undefined || seen.has(name)) return name;
    if (seen.size >= MAX_EVENT_NAMES) return '_other';
    seen.add(name);
    return name;
  };
}
