import type { Logger } from '../core/logger.js';
import type { DedupStore } from '../dedup/types.js';
import type { Clock } from '../shared/clock.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import type { CrmClient } from './crm-client.js';
import type { MailClient } from './mail-client.js';
import type { RecoveryGap } from './recovery-types.js';

/**
 * What the receiver holds, as a reconciler asks it: of these delivery ids of `service`, which has the
 * receiver stored or handled? A database inbox is one as it is (`inbox.held`); a dedup store becomes
 * one through {@link createStoreHolder}; anything else that can answer (your own table) fits the shape.
 *
 * @example
 * ```ts
 * const holder: DeliveryHolder = {
 *   held: async (service, ids) => new Set(await db.deliveryIdsIn(service, ids)),
 * };
 * ```
 */
export interface DeliveryHolder {
  held(service: 'mail' | 'crm', deliveryIds: readonly string[]): Promise<ReadonlySet<string>>;
}

/**
 * Options of {@link createReconciler}.
 *
 * @example
 * ```ts
 * const options: ReconcilerOptions = { client: mail, holder: inbox, lock: store, everyMs: 600_000 };
 * ```
 */
export interface ReconcilerOptions {
  /** A client from `createMailClient` or `createCrmClient`. */
  client: MailClient | CrmClient;
  /** What the receiver holds: a database inbox, `createStoreHolder(store)`, or your own. */
  holder: DeliveryHolder;
  /** A `DedupStore` the app has: passes claim their window and mark each resend there. */
  lock: DedupStore;
  /** Time between passes, in ms; windows align to it. Default 600 000. */
  everyMs?: number;
  /** How far back a pass looks, in ms (under the receiver's `ttlMs` with a store holder). Default a day. */
  lookbackMs?: number;
  /** Deliveries last tried this recently are left to the service's retries. Default 180 000. */
  settleMs?: number;
  /** Only these webhooks. Default: every webhook the credential lists. */
  webhookIds?: readonly string[];
  /** Email: reactivate a paused webhook (it sends nothing while paused). Default true. */
  reactivate?: boolean;
  /** Email: pages of 100 attempt records per webhook and pass, at most. Default 1000. */
  maxPages?: number;
  /** Time and timers of the schedule and the backoff. Default the wall clock. */
  clock?: Clock;
  /** After an unreachable pass: `initialMs` (5 000), doubled each time, up to `maxMs`. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long a pass's claim of its window holds unless renewed. Default 300 000. */
  lockLeaseMs?: number;
  /** A receiver's `logger` forms. Default the console (warnings and errors). */
  logger?: Logger | false;
  /** Each pass's report. */
  onReport?: (report: ReconcileReport) => void;
}

/**
 * One delivery of the service's log that the receiver does not hold.
 *
 * @example
 * ```ts
 * for (const item of report.missing) console.log(item.deliveryId, item.event, item.outcome, item.reason);
 * ```
 */
export interface ReconcileItem {
  webhookId: string;
  deliveryId: string;
  event: string | null;
  /** ISO time of its latest attempt before the pass. */
  lastAttemptAt: string | null;
  /** What the pass did with it (docs/manage.md "Reconcile on a schedule"). */
  outcome: 'recovered' | 'resent' | 'still_failing' | 'not_recoverable' | 'skipped';
  /** The resend's HTTP status at the receiver, when one was made. */
  statusCode?: number | null;
  reason?: string;
  code?: WebhookErrorCode;
}

/**
 * The report of one pass of a reconciler.
 *
 * @example
 * ```ts
 * createReconciler({ client, holder, lock, onReport: (report: ReconcileReport) => metrics.add(report.counts) });
 * ```
 */
export interface ReconcileReport {
  service: 'mail' | 'crm';
  /** First attempt at or after `from`, last before `to` (ISO). */
  window: { from: string; to: string };
  startedAt: string;
  finishedAt: string;
  /** `skipped`: another reconciler has the window (`reason`); `unreachable`: backing off. */
  status: 'done' | 'skipped' | 'unreachable' | 'stopped';
  reason: string | null;
  /** What to put on a dashboard. */
  counts: {
    /** Not held by the receiver (each counted by one pass). */
    foundMissing: number;
    /** Resends made. */
    resent: number;
    /** Resent and now held (this pass's, or an earlier one's). */
    recovered: number;
    /** Missing and not resendable (CRM, a record gone, a refused reactivation). */
    notRecoverable: number;
    /** Spans the service no longer shows. */
    historyGap: number;
  };
  /** Oldest first. */
  missing: ReconcileItem[];
  /** Resent by an earlier pass, held now. */
  arrived: string[];
  /** Email webhooks the pass reactivated. */
  reactivated: string[];
  gaps: Array<RecoveryGap & { webhookId: string }>;

  error: { code: WebhookErrorCode | 'aborted'; message: string } | null;
  /** Epoch ms; null outside the schedule. */
  nextRunAt: number | null;
}
