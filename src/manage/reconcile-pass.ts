/**
 * One reconciliation pass over one window: the service's log against what the receiver holds, then
 * for the email service one resend per missing delivery (oldest first, the holder asked again right
 * before each), for the CRM a report of what is lost and what the history no longer shows.
 */
import type { DedupStore } from '../dedup/types.js';
import { isWebhookError, type WebhookErrorCode } from '../shared/errors.js';
import type { CrmClient } from './crm-client.js';
import type { MailClient } from './mail-client.js';
import { claimKey, deliveryKey, type Timers, windowKey } from './reconcile-lock.js';
import type { DeliveryHolder, ReconcileItem, ReconcileReport } from './reconcile-types.js';
import { type Candidate, crmWindow, mailWindow, type WebhookWindow } from './reconcile-window.js';
import { reactivate, resend, type Stop, stopFor } from './recovery-retry.js';

/** What a pass works with (the reconciler's options, resolved). */
export interface PassSettings {
  client: MailClient | CrmClient;
  holder: DeliveryHolder;
  lock: DedupStore;
  webhookIds: readonly string[] | undefined;
  reactivate: boolean;
  maxPages: number;
  lockLeaseMs: number;
  /** How long a finished window stays claimed, and a delivery marked. */
  windowTtlMs: number;
  markTtlMs: number;
  timers: Timers;
  now: () => number;
}

/** Resends an earlier pass made that the receiver did not hold yet: delivery id → when. */
export type Awaiting = Map<string, number>;

/** A pass's end when it did not finish: why, and when the service said to come back. */
type Halt = Stop & { resetAt?: number | null };

/** Failures that mean the service (or the lock's store) did not answer: the next pass backs off. */
export const UNREACHABLE: readonly string[] = ['api_unavailable', 'request_timeout', 'store_unavailable'];

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

/** Email: reactivate paused webhooks, then resend each missing delivery once, oldest first. */
async function resendMissing(
  s: PassSettings,
  client: MailClient,
  windows: WebhookWindow[],
  missing: Candidate[],
  awaiting: Awaiting,
  report: ReconcileReport,
): Promise<Halt | null> {
  let halt: Halt | null = null;
  // Webhooks left paused: their deliveries cannot be resent (a paused webhook refuses retries).
  const refused = new Map<string, { reason: string; code?: WebhookErrorCode }>();
  for (const w of windows.filter((w) => w.paused)) {
    if (!s.reactivate) {
      refused.set(w.webhookId, { reason: 'the webhook is paused and reactivate is false' });
      continue;
    }
    const answer = await reactivate(client, w.webhookId, undefined);
    if (answer.stop) return answer.stop;
    if (answer.refused) {
      const { message, code } = answer.refused;
      refused.set(w.webhookId, { reason: `reactivation failed: ${message}`, code });
    } else report.reactivated.push(w.webhookId);
  }
  const sent: ReconcileItem[] = [];
  for (const c of missing) {
    const gone = refused.get(c.webhookId);
    if (gone) {
      report.missing.push({ ...c, outcome: 'not_recoverable', ...gone });
      continue;
    }
    if (halt) {
      report.missing.push({ ...c, outcome: 'skipped', reason: `the pass stopped: ${halt.code}` });
      continue;
    }
    const mark = await claimKey(s.lock, deliveryKey('mail', c.deliveryId), s.lockLeaseMs, s.timers);
    if (mark.status !== 'claimed') continue; // resent by an earlier pass, or by another reconciler now
    // Never resend what the receiver holds: it may have arrived since the pass asked.
    if ((await s.holder.held('mail', [c.deliveryId])).has(c.deliveryId)) {
      await mark.held.release();
      continue;
    }
    const base = { ...c, outcome: 'not_recoverable' as const, statusCode: null };
    const { result, stop } = await resend(client, c.webhookId, base, undefined);
    const item: ReconcileItem = { ...c, outcome: 'resent', statusCode: result.statusCode };
    if (result.reason) item.reason = result.reason;
    if (result.code) item.code = result.code;
    const unreachable = result.code !== undefined && UNREACHABLE.includes(result.code);
    if (stop || unreachable) {
      // Not sent, or not known to be: the next pass asks the holder again and resends it then.
      halt = stop ?? { code: result.code!, message: result.reason ?? result.code! };
      await mark.held.release();
      report.missing.push({ ...item, outcome: 'skipped', reason: `the pass stopped: ${halt.code}` });
      continue;
    }
    if (result.outcome === 'not_recoverable') {
      item.outcome = 'not_recoverable';
      // A record gone stays gone; a conflict (paused again) may pass next time.
      if (result.code === 'not_found') await mark.held.complete(s.markTtlMs);
      else await mark.held.release();
    } else {
      if (result.outcome === 'still_failing') item.outcome = 'still_failing';
      await mark.held.complete(s.markTtlMs);
      if (item.outcome === 'resent') sent.push(item);
    }
    report.missing.push(item);
  }
  // A resend the receiver answered 2xx is recovered once the receiver holds it (a queue may still be
  // writing it): asked now, and the ones not there yet again by the next pass.
  const arrived =
    sent.length > 0
      ? await s.holder.held(
          'mail',
          sent.map((i) => i.deliveryId),
        )
      : new Set();
  for (const item of sent) {
    if (arrived.has(item.deliveryId)) item.outcome = 'recovered';
    else awaiting.set(item.deliveryId, s.now());
  }
  return halt;
}
