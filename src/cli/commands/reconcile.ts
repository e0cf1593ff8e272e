/**
 * `svc-webhooks reconcile --service S --file app.sqlite --every 10m`: `createReconciler` from the
 * shell, against a database inbox (its lock in the same database), one report line per pass, until
 * SIGTERM or SIGINT (or one pass with `--once`).
 */
import type { Command } from 'commander';
import { countsText } from '../../manage/reconcile-log.js';
import type { ReconcileReport } from '../../manage/reconcile-types.js';
import { createReconciler } from '../../manage/reconciler.js';
import { durationMs } from '../duration.js';
import { emulatorClock } from '../emulator-clock.js';
import { parseService } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { openInbox, type TargetOptions } from '../inbox-target.js';
import { type ApiOptions, apiBase, createClient } from '../manage-client.js';
import type { Output } from '../output.js';
import { runAction } from '../run-action.js';
import { collectSet } from '../set-fields.js';
import { jsonText, visible } from '../visible-text.js';

interface ReconcileOptions extends ApiOptions, TargetOptions {
  service?: string;
  every: string;
  lookback: string;
  settle: string;
  webhook: string[];
  reactivate: boolean;
  once?: boolean;
  json?: boolean;
}

/** Registers `reconcile`. */
export function reconcileCommand(program: Command): void {
  program
    .command('reconcile')
    .description(
      "check on a schedule that every delivery the service made reached the app's inbox; resend (email) or report (CRM) the rest",
    )
    .requiredOption('--service <service>', 'mail or crm')
    .option('--every <duration>', 'time between passes', '10m')
    .option('--lookback <duration>', 'how far back each pass looks', '24h')
    .option('--settle <duration>', "leave deliveries this recent to the service's own retries", '3m')
    .option('--once', 'run one pass and exit (1 if a delivery is missing that could not be brought back)')
    .option('--database <url>', 'a PostgreSQL inbox: postgres://user:password@host/db (needs pg)')
    .option('--file <path>', 'a SQLite inbox: the database file')
    .option('--table <name>', 'the inbox table (default webhook_inbox)')
    .option('--base-url <url>', 'the service API (default $SVC_MAIL_API_URL / $SVC_CRM_API_URL)')
    .option('--emulator <url>', 'a running `svc-webhooks emulate`: its API, test credentials and clock')
    .option('--api-key <key>', 'email: an admin API key (default $SVC_MAIL_API_KEY)')
    .option('--token <token>', 'CRM: a token with integrations:manage (default $SVC_CRM_TOKEN)')
    .option('--webhook <id>', 'only this webhook (repeatable)', collectSet, [])
    .option('--no-reactivate', 'email: do not reactivate paused webhooks')
    .option('--json', 'print one JSON line per pass instead of text')
    .action(runAction(reconcile as never));
}

/** One pass as a line (and a line per delivery that cannot be brought back, per span out of sight). */
function printPass(out: Output, report: ReconcileReport): void {
  if (out.json) {
    process.stdout.write(`${jsonText(report)}\n`);
    return;
  }
  const c = out.color;
  const head = `${report.finishedAt} ${report.service} ${report.window.from} to ${report.window.to}:`;
  if (report.status === 'skipped') {
    out.line(c.dim(`${head} skipped: ${report.reason}`));
    return;
  }
  const stopped = report.error
    ? c.red(` (${report.status}: ${report.error.code}: ${visible(report.error.message)})`)
    : '';
  out.line(`${head} ${countsText(report)}${stopped}`);
  for (const item of report.missing.filter((i) => i.outcome === 'not_recoverable')) {
    out.line(
      c.yellow(
        `  not recoverable ${visible(item.deliveryId)} (${visible(item.event ?? '?')}): ${visible(item.reason ?? '')}`,
      ),
    );
  }
  for (const gap of report.gaps) {
    out.line(
      c.yellow(
        `  cannot see deliveries of ${visible(gap.webhookId)} from ${gap.from} to ${gap.to} (${gap.reason})`,
      ),
    );
  }
}

async function reconcile(out: Output, options: ReconcileOptions): Promise<ExitCode> {
  const service = parseService(options.service);
  const everyMs = durationMs(options.every, '--every');
  const lookbackMs = durationMs(options.lookback, '--lookback');
  const settleMs = durationMs(options.settle, '--settle');
  if (everyMs < 1_000) throw new CliError(`--every must be at least 1s (got ${options.every}).`);
  const base = apiBase(service, options);
  const clock = options.emulator ? await emulatorClock(base) : undefined;
  const client = createClient(service, options, base, clock, out);
  const target = await openInbox(options);
  try {
    const reconciler = createReconciler({
      client,
      holder: target.inbox,
      lock: target.lock(),
      everyMs,
      lookbackMs,
      settleMs,
      reactivate: options.reactivate,
      ...(options.webhook.length > 0 ? { webhookIds: options.webhook } : {}),
      ...(clock ? { clock } : {}),
      // The report is printed below; what the log adds is the backoff and failures of the pass.
      logger: ({ message }) => {
        if (message.startsWith('reconcile: ')) out.note(visible(message));
      },
      onReport: (report) => printPass(out, report),
    });
    if (options.once) {
      const report = await reconciler.runOnce();
      const lost = report.counts.notRecoverable + report.counts.historyGap > 0;
      if (report.status === 'unreachable') return EXIT.unreachable;
      return report.status === 'stopped' || lost ? EXIT.failed : EXIT.ok;
    }
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    reconciler.start();
    await stopped;
    await reconciler.stop();
    return EXIT.ok;
  } finally {
    await target.close();
  }
}
