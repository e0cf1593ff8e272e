import type { CrmClient } from './crm-client.js';
import {
  allAttempts,
  byDelivery,
  createdAt,
  crmGap,
  type HistoryWalk,
  iso,
  isPaused,
  latest,
  MAX_ATTEMPTS,
  retentionGap,
} from './delivery-history.js';
import type { MailClient } from './mail-client.js';
import type { RecoveryItem, WebhookRecovery } from './recovery-types.js';

/** What recovery will do for one webhook: the report entry, and the deliveries to resend. */
export interface WebhookPlan {
  recovery: WebhookRecovery;
  paused: boolean;
  toRetry: RecoveryItem[];
}

interface Window extends HistoryWalk {
  now: number;
  settleMs: number;
}

function item(webhookId: string, deliveryId: string, fields: Partial<RecoveryItem>): RecoveryItem {
  return {
    webhookId,
    deliveryId,
    event: null,
    outcome: 'not_recoverable',
    statusCode: null,
    lastAttemptAt: null,
    ...fields,
  };
}

/**
 * The failed deliveries of an email webhook since `sinceMs`: attempt records grouped by delivery id
 * (every attempt of one delivery shares it, email-service §6), test sends left out, a delivery with
 * any successful attempt left out. One still inside the service's own retry schedule is `pending`.
 */
export async function planMail(
  client: MailClient,
  webhook: { id: string; url?: unknown; [field: string]: unknown },
  w: Window,
): Promise<WebhookPlan> {
  const paused = isPaused(webhook);
  const failed: RecoveryItem[] = [];
  const pending: RecoveryItem[] = [];
  for (const [deliveryId, attempts] of byDelivery(await allAttempts(client, webhook.id, w))) {
    if (attempts.some((a) => a.success || a.kind === 'test')) continue;
    const last = latest(attempts);
    const settling =
      !paused && attempts.length < MAX_ATTEMPTS && w.now - Date.parse(last.attemptedAt) < w.settleMs;
    const entry = item(webhook.id, deliveryId, {
      event: typeof last.event === 'string' ? last.event : null,
      statusCode: typeof last.statusCode === 'number' ? last.statusCode : null,
      lastAttemptAt: last.attemptedAt,
    });
    if (settling) pending.push({ ...entry, outcome: 'pending', reason: 'the service may still retry it' });
    else failed.push(entry);
  }
  // Oldest first, so a receiver sees the resent events in their original order.
  failed.sort((a, b) => Date.parse(a.lastAttemptAt!) - Date.parse(b.lastAttemptAt!));
  return {
    recovery: {
      webhookId: webhook.id,
      url: typeof webhook.url === 'string' ? webhook.url : null,
      reactivated: false,
      failed: failed.length,
      items: pending,
      gap: retentionGap(w.sinceMs, w.now),
    },
    paused,
    toRetry: failed,
  };
}

/**
 * The failed deliveries of a CRM webhook since `sinceMs`. None can be resent (crm-service §4 has no
 * such route), so all are `not_recoverable`. When the history is full and its oldest entry is newer
 * than `sinceMs`, deliveries in between were pushed out of the 50 kept: reported as a gap.
 */
export async function planCrm(
  client: CrmClient,
  webhook: { id: string; url?: unknown },
  w: Window,
): Promise<WebhookPlan> {
  const history = await client.listDeliveries(webhook.id, w.signal ? { signal: w.signal } : {});
  const items: RecoveryItem[] = [];
  let failed = 0;
  for (const delivery of history) {
    const at = createdAt(delivery);
    if (delivery.success || at < w.sinceMs) continue;
    const attempts = delivery.attempts ?? MAX_ATTEMPTS;
    const settling =
      delivery.status === 'pending' ||
      (delivery.status === undefined && attempts < MAX_ATTEMPTS && w.now - at < w.settleMs);
    const entry = item(webhook.id, delivery.id, {
      event: typeof delivery.event === 'string' ? delivery.event : null,
      statusCode: typeof delivery.statusCode === 'number' ? delivery.statusCode : null,
      lastAttemptAt: Number.isNaN(at) ? null : iso(at),
    });
    if (settling) {
      items.push({ ...entry, outcome: 'pending', reason: 'the service may still retry it' });
    } else {
      failed++;
      items.push({ ...entry, reason: 'the CRM API has no route to resend a delivery (crm-service §4)' });
    }
  }
  items.reverse(); // the history is newest first; report oldest first
  return {
    recovery: {
      webhookId: webhook.id,
      url: typeof webhook.url === 'string' ? webhook.url : null,
      reactivated: false,
      failed,
      items,
      gap: crmGap(history, w.sinceMs),
    },
    paused: false,
    toRetry: [],
  };
}
