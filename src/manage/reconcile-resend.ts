/**
 * The email half of a reconciliation pass: a paused webhook reactivated, then each missing delivery
 * resent once, oldest first, marked in the lock first and the holder asked again right before.
 */
import type { DedupStore } from '../dedup/types.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import type { CrmClient } from './crm-client.js';
import type { MailClient } from './mail-client.js';
import { claimKey, deliveryKey, type Timers } from './reconcile-lock.js';
import type { DeliveryHolder, ReconcileItem, ReconcileReport } from './reconcile-types.js';
import type { Candidate, WebhookWindow } from './reconcile-window.js';
import { reactivate, resend, type Stop } from './recovery-retry.js';

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
export type Halt = Stop & { resetAt?: number | null };

/** Failures that mean the service (or the lock's store) did not answer: the next pass backs off. */
export const UNREACHABLE: readonly string[] = ['api_unavailable', 'request_timeout', 'store_unavailable'];

/** Email: reactivate paused webhooks, then resend each missing delivery once, oldest first. */
export async function resendMissing(
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
