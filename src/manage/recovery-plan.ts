import { WebhookError } from '../shared/errors.js';
import type { CrmClient } from './crm-client.js';
import type { MailClient } from './mail-client.js';
import type { MailDeliveryAttempt } from './mail-types.js';
import { id } from './path-id.js';
import type { RecoveryGap, RecoveryItem, WebhookRecovery } from './recovery-types.js';

const DAY = 86_400_000;
// email-service §8: delivery attempt records are kept 90 days.
const MAIL_RETENTION_MS = 90 * DAY;
// crm-service §8: the delivery history returns the 50 most recent.
const CRM_HISTORY = 50;
// Both specs: 3 attempts per delivery, after which the service gives up.
const MAX_ATTEMPTS = 3;
const PAGE = 100;
// A cursor travels back in the query string: longer ones are not a cursor any server would take.
const MAX_CURSOR_LENGTH = 4096;

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
  /** At most this many pages, and `maxPages` × {@link PAGE} records, per webhook. */
  maxPages: number;
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

/**
 * Every attempt record of an email webhook since the window's start, across pages. The service
 * chooses the cursors and the page sizes, so the walk is bounded: a repeated cursor or one over
 * {@link MAX_CURSOR_LENGTH} is `response_invalid`; more than `maxPages` pages, or more records than
 * `maxPages` full pages hold, is `page_limit_exceeded`.
 */
async function allAttempts(client: MailClient, webhookId: string, w: Window): Promise<MailDeliveryAttempt[]> {
  const attempts: MailDeliveryAttempt[] = [];
  const pageOf = new Map<string, number>();
  const where = `GET /api/v1/webhooks/${id(webhookId)}/deliveries`;
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    if (page > w.maxPages) {
      throw new WebhookError(
        'page_limit_exceeded',
        `The email API listed more than ${w.maxPages} pages of deliveries for ${where}; raise maxPages if that many are expected.`,
      );
    }
    const answer = await client.listDeliveries(
      webhookId,
      { since: w.sinceMs, limit: PAGE, ...(cursor ? { cursor } : {}) },
      w.signal ? { signal: w.signal } : {},
    );
    attempts.push(...answer.data);
    // A service that ignores `limit` could hand over any number of records per page.
    if (attempts.length > w.maxPages * PAGE) {
      throw new WebhookError(
        'page_limit_exceeded',
        `The email API listed more than ${w.maxPages * PAGE} delivery records for ${where} (${w.maxPages} pages of ${PAGE}); raise maxPages if that many are expected.`,
      );
    }
    const next = answer.nextCursor;
    if (!next) return attempts;
    if (next.length > MAX_CURSOR_LENGTH) {
      throw new WebhookError(
        'response_invalid',
        `The email API answered ${where} with a cursor longer than ${MAX_CURSOR_LENGTH} characters.`,
      );
    }
    // A repeated cursor would loop forever.
    const earlier = pageOf.get(next);
    if (earlier !== undefined) {
      throw new WebhookError(
        'response_invalid',
        `The email API repeated the cursor of page ${earlier} on page ${page} of ${where}: the list would never end.`,
      );
    }
    pageOf.set(next, page + 1);
    cursor = next;
  }
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
