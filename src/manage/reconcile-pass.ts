/**
 * One reconciliation pass over one window: the service's log against what the receiver holds, then
 * for the email service one resend per missing delivery (oldest first, the holder asked again right
 * before each), for the CRM a report of what is lost and what the history no longer shows.
 */
import { isWebhookError } from '../shared/errors.js';
import { claimKey, deliveryKey, windowKey } from './reconcile-lock.js';
import {
  type Awaiting,
  type Halt,
  type PassSettings,
  resendMissing,
  UNREACHABLE,
} from './reconcile-resend.js';
import type { ReconcileReport } from './reconcile-types.js';
import { type Candidate, crmWindow, mailWindow, type WebhookWindow } from './reconcile-window.js';
import { stopFor } from './recovery-retry.js';

export type { Awaiting, PassSettings } from './reconcile-resend.js';

const CRM_LOST =
  "the CRM API has no route to resend a delivery (crm-service §4): rebuild it from the CRM's own objects";

function haltOf(error: unknown): Halt {
  const stop = stopFor(error, undefined);
  return isWebhookError(error) && error.code === 'rate_limited' ? { ...stop, resetAt: error.resetAt } : stop;
}

/** Runs one pass over `[from, to)`; resolves its report and, for a rate limit, when to come back. */
export async function reconcilePass(
  s: PassSettings,
  awaiting: Awaiting,
  span: { from: number; to: number },
): Promise<{ report: ReconcileReport; resetAt: number | null }> {
  const { client } = s;
  const service = client.service;
  const startedAt = s.now();
  const report: ReconcileReport = {
    service,
    window: { from: new Date(span.from).toISOString(), to: new Date(span.to).toISOString() },
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: '',
    status: 'done',
    reason: null,
    counts: { foundMissing: 0, resent: 0, recovered: 0, notRecoverable: 0, historyGap: 0 },
    missing: [],
    arrived: [],
    reactivated: [],
    gaps: [],
    error: null,
    nextRunAt: null,
  };
  let halt: Halt | null = null;
  const scope = s.webhookIds ? [...s.webhookIds].sort().join(',') : '*';
  try {
    const window = await claimKey(
      s.lock,
      windowKey(service, scope, span.from, span.to),
      s.lockLeaseMs,
      s.timers,
    );
    if (window.status !== 'claimed') {
      report.status = 'skipped';
      report.reason =
        window.status === 'busy'
          ? 'another reconciler is working this window'
          : 'another reconciler reconciled this window';
    } else {
      try {
        halt = await work(s, awaiting, span, startedAt, report);
      } catch (error) {
        halt = haltOf(error);
      }
      if (halt) await window.held.release();
      else await window.held.complete(s.windowTtlMs);
    }
  } catch (error) {
    halt ??= haltOf(error); // the lock's store did not answer
  }
  if (halt) {
    report.status = UNREACHABLE.includes(halt.code) ? 'unreachable' : 'stopped';
    report.error = { code: halt.code, message: halt.message };
  }
  const { counts, missing } = report;
  counts.foundMissing = missing.filter((i) => i.outcome !== 'skipped').length;
  counts.resent = missing.filter((i) => ['recovered', 'resent', 'still_failing'].includes(i.outcome)).length;
  counts.recovered = missing.filter((i) => i.outcome === 'recovered').length + report.arrived.length;
  counts.notRecoverable = missing.filter((i) => i.outcome === 'not_recoverable').length;
  counts.historyGap = report.gaps.length;
  report.finishedAt = new Date(s.now()).toISOString();
  return { report, resetAt: halt?.resetAt ?? null };
}

/** The pass itself, once its window is claimed; resolves why it stopped early, or null. */
async function work(
  s: PassSettings,
  awaiting: Awaiting,
  span: { from: number; to: number },
  now: number,
  report: ReconcileReport,
): Promise<Halt | null> {
  const { client } = s;
  const hooks = s.webhookIds
    ? await Promise.all(s.webhookIds.map((id) => client.getWebhook(id)))
    : await client.listWebhooks();
  const windows: WebhookWindow[] = [];
  const bounds = { ...span, now, maxPages: s.maxPages, signal: undefined };
  for (const hook of hooks) {
    windows.push(
      client.service === 'mail'
        ? await mailWindow(client, hook, bounds)
        : await crmWindow(client, hook, bounds),
    );
  }
  for (const w of windows) if (w.gap) report.gaps.push({ ...w.gap, webhookId: w.webhookId });

  const candidates = windows.flatMap((w) => w.candidates);
  const held = await s.holder.held(client.service, [
    ...candidates.map((c) => c.deliveryId),
    ...awaiting.keys(),
  ]);
  for (const id of awaiting.keys()) {
    if (!held.has(id)) continue;
    report.arrived.push(id);
    awaiting.delete(id);
  }
  const missing = candidates
    .filter((c) => !held.has(c.deliveryId))
    .sort((a, b) => Date.parse(a.lastAttemptAt ?? '') - Date.parse(b.lastAttemptAt ?? ''));
  if (client.service === 'crm') return reportLost(s, missing, report);
  return resendMissing(s, client, windows, missing, awaiting, report);
}

/** CRM: every missing delivery reported once (by the pass that marks it), with its id and event. */
async function reportLost(s: PassSettings, missing: Candidate[], report: ReconcileReport): Promise<null> {
  for (const c of missing) {
    const mark = await claimKey(s.lock, deliveryKey('crm', c.deliveryId), s.lockLeaseMs);
    if (mark.status !== 'claimed') continue; // reported by an earlier pass, or another reconciler's now
    await mark.held.complete(s.markTtlMs);
    report.missing.push({ ...c, outcome: 'not_recoverable', reason: CRM_LOST });
  }
  return null;
}
