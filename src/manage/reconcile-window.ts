/**
 * The deliveries of one webhook a reconciliation pass looks at: those the service made in the window
 * (first attempt at or after `from`) and stopped trying before its end (`to`), whatever their outcome
 * at the service: a 2xx the receiver then lost is as missing as a delivery that failed.
 */
import type { CrmClient } from './crm-client.js';
import {
  allAttempts,
  byDelivery,
  createdAt,
  crmGap,
  iso,
  isPaused,
  latest,
  retentionGap,
} from './delivery-history.js';
import type { MailClient } from './mail-client.js';
import type { RecoveryGap } from './recovery-types.js';

/** A delivery of the window, before the holder is asked. */
export interface Candidate {
  webhookId: string;
  deliveryId: string;
  event: string | null;
  lastAttemptAt: string | null;
}

/** One webhook's part of a pass. */
export interface WebhookWindow {
  webhookId: string;
  paused: boolean;
  /** Oldest first. */
  candidates: Candidate[];
  gap: RecoveryGap | null;
}

/** The span of a pass and what bounds its listing. */
export interface Span {
  from: number;
  to: number;
  now: number;
  maxPages: number;
  signal: AbortSignal | undefined;
}

type Hook = { id: string; [field: string]: unknown };

/** Email: the attempt records since `from`, one candidate per delivery id (test sends left out). */
export async function mailWindow(client: MailClient, webhook: Hook, span: Span): Promise<WebhookWindow> {
  const walk = { sinceMs: span.from, signal: span.signal, maxPages: span.maxPages };
  const candidates: Candidate[] = [];
  for (const [deliveryId, attempts] of byDelivery(await allAttempts(client, webhook.id, walk))) {
    if (attempts.some((a) => a.kind === 'test')) continue;
    const first = attempts.reduce((a, b) => (Date.parse(b.attemptedAt) < Date.parse(a.attemptedAt) ? b : a));
    // Its first attempts came before `from` (the record numbers them): an earlier window's delivery.
    if (typeof first.attempt === 'number' && first.attempt > 1) continue;
    const last = latest(attempts);
    if (!(Date.parse(last.attemptedAt) < span.to)) continue; // still being tried: the next window's
    candidates.push({
      webhookId: webhook.id,
      deliveryId,
      event: typeof last.event === 'string' ? last.event : null,
      lastAttemptAt: last.attemptedAt,
    });
  }
  candidates.sort((a, b) => Date.parse(a.lastAttemptAt!) - Date.parse(b.lastAttemptAt!));
  return {
    webhookId: webhook.id,
    paused: isPaused(webhook),
    candidates,
    gap: retentionGap(span.from, span.now),
  };
}

/** CRM: the deliveries of the history (the 50 most recent) created in the window. */
export async function crmWindow(client: CrmClient, webhook: Hook, span: Span): Promise<WebhookWindow> {
  const history = await client.listDeliveries(webhook.id, span.signal ? { signal: span.signal } : {});
  const candidates: Candidate[] = [];
  for (const delivery of history) {
    const at = createdAt(delivery);
    if (!(at >= span.from && at < span.to) || delivery.status === 'pending') continue;
    candidates.push({
      webhookId: webhook.id,
      deliveryId: delivery.id,
      event: typeof delivery.event === 'string' ? delivery.event : null,
      lastAttemptAt: iso(at),
    });
  }
  candidates.reverse(); // the history is newest first
  return { webhookId: webhook.id, paused: false, candidates, gap: crmGap(history, span.from) };
}
