/** The text form of a recovery report (`svc-webhooks recover` without `--json`). */
import type { RecoveryReport } from '../manage/recovery-types.js';
import type { Output } from './output.js';
import { visible } from './visible-text.js';

/** Prints the report per webhook, then the counts and each delivery still failing. */
export function printReport(out: Output, report: RecoveryReport): void {
  const c = out.color;
  out.line(
    `${c.bold(`${report.service} recovery`)} since ${report.since}${report.dryRun ? c.yellow(' (dry run: nothing changed)') : ''}`,
  );
  for (const w of report.webhooks) {
    out.line(
      `  ${visible(w.webhookId)} ${c.dim(visible(w.url ?? ''))}: ${w.failed} failed${w.reactivated ? ', reactivated' : ''}`,
    );
    if (w.gap)
      out.line(c.yellow(`    cannot see deliveries from ${w.gap.from} to ${w.gap.to} (${w.gap.reason})`));
  }
  const rows: Array<[string, number, (s: string) => string]> = [
    ['retried', report.retried.length, (s) => s],
    ['succeeded', report.succeeded.length, c.green],
    ['still failing', report.stillFailing.length, c.red],
    ['unconfirmed', report.unconfirmed.length, c.yellow],
    ['not recoverable', report.notRecoverable.length, c.yellow],
    ['pending (service still retrying)', report.pending.length, c.dim],
    ['skipped', report.skipped.length, c.dim],
  ];
  for (const [label, count, color] of rows)
    if (count > 0 || label === 'retried') out.line(`  ${color(`${label}: ${count}`)}`);
  for (const item of report.stillFailing) {
    out.line(
      c.red(
        `  still failing ${visible(item.deliveryId)} (${visible(item.event ?? '?')}): ${item.statusCode ?? ''} ${visible(item.reason ?? '')}`,
      ),
    );
  }
  if (report.stopped)
    out.line(c.red(`  stopped early: ${report.stopped.code}: ${visible(report.stopped.message)}`));
}
