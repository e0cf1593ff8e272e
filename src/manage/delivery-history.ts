/**
 * What the services' delivery histories say, read the same way by recovery and reconciliation: every
 * email attempt record since a time (all pages, bounded), whether an email webhook is paused, and the
 * span the CRM's 50-delivery history no longer shows.
 */
import { WebhookError } from '../shared/errors.js';
import type { CrmDelivery } from './crm-types.js';
import type { MailClient } from './mail-client.js';
import type { MailDeliveryAttempt } from './mail-types.js';
import { id } from './path-id.js';
import type { RecoveryGap } from './recovery-types.js';

const DAY = 86_400_000;
/** email-service §8: delivery attempt records are kept 90 days. */
export const MAIL_RETENTION_MS = 90 * DAY;
/** crm-service §8: the delivery history returns the 50 most recent. */
export const CRM_HISTORY = 50;
/** Both specs: 3 attempts per delivery, after which the service gives up. */
export const MAX_ATTEMPTS = 3;
const PAGE = 100;
// A cursor travels back in the query string: longer ones are not a cursor any server would take.
const MAX_CURSOR_LENGTH = 4096;

/** How much of an email history a walk reads, and what aborts it. */
export interface HistoryWalk {
  sinceMs: number;
  signal: AbortSignal | undefined;
  /** At most this many pages, and `maxPages` × 100 records, per webhook. */
  maxPages: number;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Whether an email webhook is paused. The emulated API says `status: 'paused'`; §3 does not show the
 * field, so the other usual spellings count too.
 */
export function isPaused(webhook: Record<string, unknown>): boolean {
  return (
    webhook.status === 'paused' ||
    webhook.state === 'paused' ||
    webhook.paused === true ||
    webhook.active === false
  );
}

/**
 * Every attempt record of an email webhook since the walk's start, across pages. The service
 * chooses the cursors and the page sizes, so the walk is bounded: a repeated cursor or one over
 * {@link MAX_CURSOR_LENGTH} is `response_invalid`; more than `maxPages` pages, or more records than
 * `maxPages` full pages hold, is `page_limit_exceeded`.
 */
export async function allAttempts(
  client: MailClient,
  webhookId: string,
  w: HistoryWalk,
): Promise<MailDeliveryAttempt[]> {
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

/** Attempt records grouped by delivery id (every attempt of one delivery shares it, email-service §6). */
export function byDelivery(attempts: readonly MailDeliveryAttempt[]): Map<string, MailDeliveryAttempt[]> {
  const grouped = new Map<string, MailDeliveryAttempt[]>();
  for (const attempt of attempts) {
    const list = grouped.get(attempt.deliveryId) ?? [];
    list.push(attempt);
    grouped.set(attempt.deliveryId, list);
  }
  return grouped;
}

/** The latest of a delivery's attempts. */
export const latest = (attempts: readonly MailDeliveryAttempt[]): MailDeliveryAttempt =>
  attempts.reduce((a, b) => (Date.parse(b.attemptedAt) > Date.parse(a.attemptedAt) ? b : a));

/** When a CRM delivery was created, epoch ms (NaN when the record does not say). */
export const createdAt = (d: CrmDelivery): number =>
  typeof d.createdAt === 'string' ? Date.parse(d.createdAt) : Number.NaN;

/**
 * The span since `sinceMs` that a CRM history no longer shows: when it is full (crm-service §8: the
 * 50 most recent) and its oldest entry is newer than `sinceMs`, deliveries in between were pushed out.
 */
export function crmGap(history: readonly CrmDelivery[], sinceMs: number): RecoveryGap | null {
  const times = history.map(createdAt).filter((t) => !Number.isNaN(t));
  const oldestAt = times.length > 0 ? Math.min(...times) : Number.NaN;
  return history.length >= CRM_HISTORY && oldestAt > sinceMs
    ? { from: iso(sinceMs), to: iso(oldestAt), reason: 'history_limit' }
    : null;
}

/** The part of a window before the email service's 90 days of records (§8), or null. */
export function retentionGap(sinceMs: number, now: number): RecoveryGap | null {
  const start = now - MAIL_RETENTION_MS;
  return sinceMs < start ? { from: iso(sinceMs), to: iso(start), reason: 'retention' } : null;
}
