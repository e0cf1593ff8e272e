/**
 * `svc-webhooks recover --service S --since 2h`: `recoverFailedDeliveries` from the shell, against a
 * service's management API or a running emulator, with progress on stderr and the report.
 */
import type { Command } from 'commander';
import { recoverFailedDeliveries } from '../../manage/recovery.js';
import type { RecoveryProgress, RecoveryReport } from '../../manage/recovery-types.js';
import { isWebhookError } from '../../shared/errors.js';
import { durationMs } from '../duration.js';
import { emulatorClock } from '../emulator-clock.js';
import { parseService } from '../events.js';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';
import { type ApiOptions, apiBase, createClient } from '../manage-client.js';
import type { Output, Progress } from '../output.js';
import { printReport } from '../recover-report.js';
import { runAction, withJson } from '../run-action.js';
import { collectSet } from '../set-fields.js';

interface RecoverOptions extends ApiOptions {
  service?: string;
  since?: string;
  webhook: string[];
  settle: string;
  dryRun?: boolean;
  reactivate: boolean;
  maxPages: string;
}

/** Registers `recover`. */
export function recoverCommand(program: Command): void {
  withJson(program.command('recover'))
    .description(
      're-drive the deliveries that failed since a time: reactivate paused webhooks, retry each failure once, report',
    )
    .requiredOption('--service <service>', 'mail or crm')
    .requiredOption(
      '--since <when>',
      'where the outage began: a duration before now (90m, 2h, 7d) or an ISO time',
    )
    .option('--base-url <url>', 'the service API (default $SVC_MAIL_API_URL / $SVC_CRM_API_URL)')
    .option('--emulator <url>', 'a running `svc-webhooks emulate`: its API, test credentials and clock')
    .option('--api-key <key>', 'email: an admin API key (default $SVC_MAIL_API_KEY)')
    .option('--token <token>', 'CRM: a token with integrations:manage (default $SVC_CRM_TOKEN)')
    .option('--webhook <id>', 'only this webhook (repeatable)', collectSet, [])
    .option('--settle <duration>', "leave deliveries this recent to the service's own retries", '3m')
    .option('--no-reactivate', 'email: do not reactivate paused webhooks')
    .option('--dry-run', 'report what would be done; change nothing')
    .option('--max-pages <n>', 'email: list at most n pages (100 records each) per webhook', '1000')
    .action(runAction(recover as never));
}

async function recover(out: Output, options: RecoverOptions): Promise<ExitCode> {
  const service = parseService(options.service);
  const since = options.since!;
  if (!/^\d+(\.\d+)?(ms|s|m|h|d)$/.test(since) && Number.isNaN(Date.parse(since))) {
    throw new CliError(`--since "${since}" is neither a duration (2h) nor an ISO time.`);
  }
  const settleMs = durationMs(options.settle, '--settle');
  const maxPages = Number(options.maxPages);
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
    throw new CliError(`--max-pages must be a whole number of at least 1 (got ${options.maxPages}).`);
  }
  const base = apiBase(service, options);
  const clock = options.emulator ? await emulatorClock(base) : undefined;
  const client = createClient(service, options, base, clock, out);

  // One bar per phase (listing, reactivating, retrying), on a TTY stderr only.
  let bar: Progress | undefined;
  let phase = '';
  const labels = { list: 'listing', reactivate: 'reactivating', retry: 'retrying' } as const;
  const onProgress = (p: RecoveryProgress) => {
    if (p.phase === 'done') return;
    if (p.phase !== phase) {
      bar?.done();
      phase = p.phase;
      bar = out.progress(labels[p.phase], p.total);
    }
    bar?.tick();
  };
  let report: RecoveryReport;
  try {
    report = await recoverFailedDeliveries({
      client,
      since,
      settleMs,
      maxPages,
      dryRun: options.dryRun ?? false,
      reactivate: options.reactivate,
      ...(options.webhook.length > 0 ? { webhookIds: options.webhook } : {}),
      ...(clock ? { now: clock.now } : {}),
      onProgress,
    });
  } catch (error) {
    bar?.done();
    if (!isWebhookError(error)) throw error;
    const unreachable = error.code === 'api_unavailable' || error.code === 'request_timeout';
    // options_invalid: a --since that is no time (beyond the range of a Date), before any call.
    const exit = error.code === 'options_invalid' ? EXIT.usage : unreachable ? EXIT.unreachable : EXIT.failed;
    throw new CliError(error.message, exit, error.code);
  }
  bar?.done();
  // Exit 1 while any failure remains: retried and failing again, unconfirmed, or not recoverable (CRM).
  const remaining = report.stillFailing.length + report.unconfirmed.length + report.notRecoverable.length;
  const ok = report.stopped === null && (report.dryRun || remaining === 0);
  if (out.json) out.result({ ok, ...report });
  else printReport(out, report);
  return ok ? EXIT.ok : EXIT.failed;
}
