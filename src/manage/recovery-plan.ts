import type { CrmClient } from './crm-client.js';
import type { MailClient } from './mail-client.js';
import type { MailDeliveryAttempt } from './mail-types.js';
import type { RecoveryGap, RecoveryItem, WebhookRecovery } from './recovery-types.js';

const DAY = 86_400_000;
// email-service §8: delivery attempt records are kept 90 days.
const MAIL_RETENTION_MS = 90 * DAY;
// crm-service §8: the delivery history returns the 50 most recent.
const CRM_HISTORY = 50;
// Both specs: 3 attempts per delivery, after which the service gives up.
const MAX_ATTEMPTS = 3;
const PAGE = 100;

/** What recovery will do for one webhook: the report entry, and the deliveries to resend. */
export interface WebhookPlan {
  recovery: WebhookRecovery;
  paused: boolean;
  toRetry: RecoveryItem[];
}

interface Window {
  sinceMs: number;
  now: number;
  settleMs: number;
  signal: AbortSignal | undefined;
}

const iso = (ms: number): string => new Date(ms).toISOString();

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
 * Whether an email webhook is paused. The emulated API says `status: 'paused'`; §3 does not show the
 * field, so the other usual spellings count too.
 */
function isPaused(webhook: Record<string, unknown>): boolean {
  return (
    webhook.status === 'paused' ||
    webhook.state === 'paused' ||
    webhook.paused === true ||
    webhook.active === false
  );
}

/** Every attempt record of an email webhook since the window's start, across pages. */
async function allAttempts(client: MailClient, webhookId: string, w: Window): Promise<MailDeliveryAttempt[]> {
  const attempts: MailDeliveryAttempt[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    const page = await client.listDeliveries(
      webhookId,
      { since: w.sinceMs, limit: PAGE, ...(cursor ? { cursor } : {}) },
      w.signal ? { signal: w.signal } : {},
    );
    attempts.push(...page.data);
    // A service that repeats a cursor would loop forever: stop at the first repeat.
    cursor = page.nextCursor && !seen.has(page.nextCursor) ? page.nextCursor : undefined;
    if (cursor) seen.add(cursor);
  } while (cursor);
  return attempts;
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
  const byDelivery = new Map<string, MailDeliveryAttempt[]>();
  for (const attempt of await allAttempts(client, webhook.id, w)) {
    const list = byDelivery.get(attempt.deliveryId) ?? [];
    list.push(attempt);
    byDelivery.set(attempt.deliveryId, list);
  }
  const failed: RecoveryItem[] = [];
  const pending: RecoveryItem[] = [];
  for (const [deliveryId, attempts] of byDelivery) {
    if (attempts.some((a) => a.success || a.kind === 'test')) continue;
    const last = attempts.reduce((a, b) => (Date.parse(b.attemptedAt) > Date.parse(a.attemptedAt) ? b : a));
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
  const retentionStart = w.now - MAIL_RETENTION_MS;
  const gap: RecoveryGap | null =
    w.sinceMs < retentionStart
      ? { from: iso(w.sinceMs), to: iso(retentionStart), reason: 'retention' }
      : null;
  return {
    recovery: {
      webhookId: webhook.id,
      url: typeof webhook.url === 'string' ? webhook.url : null,
      reactivated: false,
      failed: failed.length,
      items: pending,
      gap,
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
  const created = (d: { createdAt?: unknown }): number =>
    typeof d.createdAt === 'string' ? Date.parse(d.createdAt) : Number.NaN;
  const items: RecoveryItem[] = [];
  let failed = 0;
  for (const delivery of history) {
    const at = created(delivery);
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
  const oldest = history.map(created).filter((t) => !Number.isNaN(t));
  const oldestAt = oldest.length > 0 ? Math.min(...oldest) : Number.NaN;
  const gap: RecoveryGap | null =
    history.length >= CRM_HISTORY && oldestAt > w.sinceMs
      ? { from: iso(w.sinceMs), to: iso(oldestAt), reason: 'history_limit' }
      : null;
  return {
    recovery: {
      webhookId: webhook.id,
      url: typeof webhook.url === 'string' ? webhook.url : null,
      reactivated: false,
      failed,
      items,
      gap,
    },
    paused: false,
    toRetry: [],
  };
}
