import { WebhookError, type WebhookErrorCode } from '../shared/errors.js';
import { toEpochMs } from './normalize.js';
import { planCrm, planMail, type WebhookPlan } from './recovery-plan.js';
import { fileItems, reactivate as reactivateWebhook, resend, type Stop, skip } from './recovery-retry.js';
import type { RecoveryItem, RecoveryOptions, RecoveryReport } from './recovery-types.js';

/**
 * Finds and re-drives the deliveries that failed since `since`, within the service's rate limits (the
 * client waits for `X-RateLimit-Reset` / `Retry-After` and for exhausted windows). Email: reactivates
 * paused webhooks (email-service §3), then resends each failed delivery once, oldest first, with the
 * retry route (§6 rule 5, same `X-SvcMAIL-Id`, so a deduplicating receiver handles it once). CRM:
 * reports the failures (the CRM has no resend route) and a gap when some were pushed out of the 50
 * deliveries it keeps (crm-service §8).
 *
 * @example
 * ```ts
 * import { createMailClient, recoverFailedDeliveries } from '@svc/webhooks/manage';
 *
 * const client = createMailClient({ baseUrl: 'https://api.svcmail.example', apiKey: process.env.SVC_MAIL_API_KEY! });
 * const report = await recoverFailedDeliveries({
 *   client,
 *   since: '2h',
 *   onProgress: (p) => p.phase === 'retry' && console.log(`${p.done}/${p.total} ${p.outcome}`),
 * });
 * console.log(report.succeeded.length, 'recovered;', report.stillFailing.length, 'still failing');
 * ```
 */
export async function recoverFailedDeliveries(options: RecoveryOptions): Promise<RecoveryReport> {
  const {
    client,
    since,
    webhookIds,
    reactivate = true,
    settleMs = 180_000,
    dryRun = false,
    now = () => Date.now(),
    onProgress,
    signal,
    maxPages = 1_000,
  } = options;
  if (!Number.isSafeInteger(maxPages) || maxPages < 1) {
    throw new WebhookError('options_invalid', 'maxPages must be a whole number of at least 1.');
  }
  const start = now();
  const window = { sinceMs: toEpochMs(since, start), now: start, settleMs, signal, maxPages };
  const call = signal ? { signal } : {};
  const report: RecoveryReport = {
    service: client.service,
    since: new Date(window.sinceMs).toISOString(),
    dryRun,
    webhooks: [],
    retried: [],
    succeeded: [],
    stillFailing: [],
    unconfirmed: [],
    notRecoverable: [],
    pending: [],
    skipped: [],
    stopped: null,
  };

  // 1. List: nothing changes yet, so errors (and aborts) reject the whole call.
  const webhooks: { id: string; url?: unknown; [field: string]: unknown }[] = webhookIds
    ? []
    : await client.listWebhooks(call);
  for (const id of webhookIds ?? []) webhooks.push(await client.getWebhook(id, call));
  const plans: WebhookPlan[] = [];
  for (const webhook of webhooks) {
    plans.push(
      client.service === 'mail'
        ? await planMail(client, webhook, window)
        : await planCrm(client, webhook, window),
    );
    onProgress?.({ phase: 'list', webhookId: webhook.id, done: plans.length, total: webhooks.length });
  }

  let stop: Stop | null = null;

  // 2. Reactivate paused email webhooks: a paused webhook refuses retries (409) and sends nothing.
  const paused = plans.filter((p) => p.paused);
  let reactivated = 0;
  for (const plan of paused) {
    const giveUp = (reason: string, code?: WebhookErrorCode): void => {
      plan.recovery.items.push(...plan.toRetry.map((e) => ({ ...e, reason, ...(code ? { code } : {}) })));
      plan.toRetry = [];
    };
    if (!reactivate) {
      giveUp('the webhook is paused and reactivate is false');
      continue;
    }
    if (!dryRun && !stop && client.service === 'mail') {
      const answer = await reactivateWebhook(client, plan.recovery.webhookId, signal);
      // Deleted or refused for this webhook alone: its deliveries cannot be resent; go on.
      if (answer.refused) giveUp(`reactivation failed: ${answer.refused.message}`, answer.refused.code);
      else if (answer.stop) stop = answer.stop;
      else plan.recovery.reactivated = true;
    }
    onProgress?.({
      phase: 'reactivate',
      webhookId: plan.recovery.webhookId,
      done: ++reactivated,
      total: paused.length,
    });
  }

  // 3. Resend each failed delivery once, one call at a time (the client paces them to the rate limit).
  const total = plans.reduce((n, p) => n + p.toRetry.length, 0);
  let done = 0;
  for (const plan of plans) {
    for (const entry of plan.toRetry) {
      let result: RecoveryItem;
      if (dryRun) result = skip(entry, 'dry run');
      else if (stop) result = skip(entry, `the run stopped: ${stop.code}`);
      else if (client.service !== 'mail') result = entry;
      else {
        const outcome = await resend(client, plan.recovery.webhookId, entry, signal);
        result = outcome.result;
        stop = outcome.stop;
      }
      plan.recovery.items.push(result);
      onProgress?.({
        phase: 'retry',
        webhookId: plan.recovery.webhookId,
        deliveryId: entry.deliveryId,
        outcome: result.outcome,
        done: ++done,
        total,
      });
    }
    report.webhooks.push(plan.recovery);
  }

  for (const hook of report.webhooks) fileItems(report, hook.items);
  report.stopped = stop;
  onProgress?.({ phase: 'done', done, total });
  return report;
}
