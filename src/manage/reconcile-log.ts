/** A reconciliation pass as log entries: one line for the report, one per delivery or span lost. */
import { emit, type LogSink } from '../core/logger.js';
import type { ReconcileReport } from './reconcile-types.js';

const NAMES = { mail: 'email', crm: 'CRM' } as const;

/** The counts of a report in words, as the log line and the CLI print them. */
export function countsText(report: ReconcileReport): string {
  const { foundMissing, resent, recovered, notRecoverable, historyGap } = report.counts;
  return `${foundMissing} found missing, ${resent} resent, ${recovered} recovered, ${notRecoverable} not recoverable, ${historyGap} history gap`;
}

/** Logs `report`; `delayMs` is the wait until the next pass. */
export function logReport(log: LogSink | undefined, report: ReconcileReport, delayMs: number): void {
  if (!log) return;
  const { service, counts, error } = report;
  const name = NAMES[service];
  const fields = { service, from: report.window.from, to: report.window.to, status: report.status };
  if (report.status === 'unreachable' || (report.status === 'stopped' && error?.code === 'rate_limited')) {
    const what = error?.code === 'store_unavailable' ? 'the lock store' : `the ${name} API`;
    emit(
      log,
      'warn',
      `reconcile: cannot reach ${what} (${error?.code}: ${error?.message}); retrying in ${Math.ceil(delayMs / 1000)} s`,
      {
        ...fields,
        code: error?.code,
      },
    );
    return;
  }
  const notable = counts.foundMissing + counts.notRecoverable + counts.historyGap > 0;
  const level = report.status === 'stopped' ? 'error' : notable ? 'warn' : 'info';
  if (level === 'info' && !log.verbose) return;
  const outcome =
    report.status === 'skipped'
      ? `skipped: ${report.reason}`
      : `${countsText(report)}${error ? `; stopped: ${error.code}: ${error.message}` : ''}`;
  emit(log, level, `reconcile ${name}: ${outcome}`, { ...fields, ...counts, code: error?.code });
  for (const item of report.missing) {
    if (item.outcome !== 'not_recoverable') continue;
    emit(log, 'warn', `reconcile ${name}: a delivery the receiver never got cannot be resent`, {
      service,
      webhookId: item.webhookId,
      deliveryId: item.deliveryId,
      event: item.event ?? undefined,
      reason: item.reason,
    });
  }
  for (const gap of report.gaps) {
    emit(
      log,
      'warn',
      `reconcile ${name}: the service no longer shows deliveries from ${gap.from} to ${gap.to}`,
      {
        service,
        webhookId: gap.webhookId,
        reason: gap.reason,
      },
    );
  }
}
