/**
 * `createInboxMetrics`: the depth of a database inbox as OpenTelemetry observable gauges, read from
 * `inbox.stats()` once per collection. Structural: this entry imports nothing of the inbox.
 */
import {
  type Attributes,
  type BatchObservableCallback,
  type MeterProvider,
  metrics,
} from '@opentelemetry/api';
import { ATTR, INBOX_METRIC, SCOPE, SCOPE_VERSION } from './names.js';

/**
 * Options of {@link createInboxMetrics}: `inbox` is any object with the inbox's `stats()` (a
 * `createPostgresInbox` or `createSqliteInbox` inbox).
 *
 * @example
 * ```ts
 * import type { Inbox } from '@svc/webhooks/postgres';
 * import type { InboxMetricsOptions } from '@svc/webhooks/otel';
 *
 * declare const inbox: Inbox;
 * const options: InboxMetricsOptions = { inbox, name: 'webhook_inbox' };
 * ```
 */
export interface InboxMetricsOptions {
  inbox: {
    stats(): Promise<{ rows: Readonly<Record<string, number>>; oldestPendingAgeMs: number | null }>;
  };
  /** A name for this inbox in the attribute `svc_webhooks.inbox.name` (several inboxes, one app). */
  name?: string;
  /** The meter provider of the gauges. Default: the global one when this is called. */
  meterProvider?: MeterProvider;
}

/**
 * Reports an inbox's depth as gauges at every metrics collection: `svc_webhooks.inbox.rows` (rows by
 * `svc_webhooks.inbox.status`), `svc_webhooks.inbox.oldest_pending_age` (seconds since the receipt of
 * the oldest `received`, `failed` or `processing` row; 0 while none is pending) and
 * `svc_webhooks.inbox.quarantined`. Each collection runs one `stats()` (a scan of the table); a
 * collection while the database is unreachable reports nothing. `stop()` unregisters the gauges.
 *
 * @example
 * ```ts
 * import type { Inbox } from '@svc/webhooks/postgres';
 * import { createInboxMetrics } from '@svc/webhooks/otel';
 *
 * declare const inbox: Inbox;
 * const gauges = createInboxMetrics({ inbox }); // after the SDK started (or pass meterProvider)
 * process.once('SIGTERM', () => gauges.stop());
 * ```
 */
export function createInboxMetrics(options: InboxMetricsOptions): { stop(): void } {
  const { inbox, name, meterProvider = metrics.getMeterProvider() } = options;
  const meter = meterProvider.getMeter(SCOPE, SCOPE_VERSION);
  const base: Attributes = name === undefined ? {} : { [ATTR.inboxName]: name };
  const rows = meter.createObservableGauge(INBOX_METRIC.rows, {
    description: 'Rows of the webhook inbox by status.',
    unit: '{row}',
  });
  const oldest = meter.createObservableGauge(INBOX_METRIC.oldestPendingAge, {
    description: 'Seconds since the receipt of the oldest pending (received, failed, processing) inbox row.',
    unit: 's',
  });
  const quarantined = meter.createObservableGauge(INBOX_METRIC.quarantined, {
    description: 'Authentic deliveries quarantined in the webhook inbox (their payload failed the schema).',
    unit: '{row}',
  });
  const observe: BatchObservableCallback = async (result) => {
    let stats: Awaited<ReturnType<InboxMetricsOptions['inbox']['stats']>>;
    try {
      stats = await inbox.stats();
    } catch {
      return; // the database is unreachable: no point rather than a wrong one
    }
    for (const [status, count] of Object.entries(stats.rows))
      result.observe(rows, count, { ...base, [ATTR.inboxStatus]: status });
    result.observe(quarantined, stats.rows.quarantined ?? 0, base);
    result.observe(oldest, (stats.oldestPendingAgeMs ?? 0) / 1_000, base);
  };
  const observables = [rows, oldest, quarantined];
  meter.addBatchObservableCallback(observe, observables);
  return { stop: () => meter.removeBatchObservableCallback(observe, observables) };
}
