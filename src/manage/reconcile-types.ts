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
  /**
   * Where reconcilers of one service take turns: any `DedupStore` the app already has (the dedup
   * store, or one in the inbox's database). A pass claims its window there, so two reconcilers never
   * work one window at once, and each delivery it resends is marked there, so it is resent once.
   */
  lock: DedupStore;
  /** Time between passes, in ms; the windows are aligned to it. Default 600 000 (10 minutes). */
  everyMs?: number;
  /**
   * How far back a pass looks, in ms. Default 86 400 000 (a day). With a dedup store as the holder, keep
   * it under the receiver's `ttlMs` (mail 90 days, CRM a day): a record that expired looks missing.
   */
  lookbackMs?: number;
  /**
   * Deliveries whose last attempt is younger than this are left to the next pass: the service may
   * still retry them (email-service §6 rule 4: attempts at 0, ~1 and ~2 minutes). Default 180 000.
   */
  settleMs?: number;
  /** Only these webhooks. Default: every webhook the credential lists. */
  webhookIds?: readonly string[];
  /** Email: reactivate a paused webhook (it sends nothing while paused). Default true. */
  reactivate?: boolean;
  /** Email: at most this many pages of 100 attempt records per webhook and pass. Default 1000. */
  maxPages?: number;
  /** Time and timers of the schedule and the backoff. Default the wall clock. */
  clock?: Clock;
  /** Waits after a pass could not reach the service: `initialMs`, doubled each time, up to `maxMs`. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How long a pass holds its window before another reconciler may take it over. Default 300 000. */
  lockLeaseMs?: number;
  /** Where the reports and the backoff notes go (a receiver's `logger` forms). Default the console, warnings up. */
  logger?: Logger | false;
  /** Called with each pass's report: count it, alert on it. */
  onReport?: (report: ReconcileReport) => void;
}

/**
 * What a pass did with one delivery the receiver does not hold: `recovered` (resent, and the receiver
 * holds it now), `resent` (resent; not held yet when checked), `still_failing` (resent; the receiver
 * answered non-2xx), `not_recoverable` (the CRM, which has no resend route; a record gone; a refused
 * reactivation), `skipped` (the pass stopped first, or another reconciler is resending it).
 *
 * @example
 * ```ts
 * const lost = report.missing.filter((item) => item.outcome === ('not_recoverable' satisfies ReconcileOutcome));
 * ```
 */
export type ReconcileOutcome = 'recovered' | 'resent' | 'still_failing' | 'not_recoverable' | 'skipped';

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
  outcome: ReconcileOutcome;
  /** The resend's HTTP status at the receiver, when one was made. */
  statusCode?: number | null;
  reason?: string;
  code?: WebhookErrorCode;
}

/**
 * The counts of a pass: what to put on a dashboard.
 *
 * @example
 * ```ts
 * const { foundMissing, recovered }: ReconcileCounts = report.counts;
 * ```
 */
export interface ReconcileCounts {
  /** Deliveries in the window the receiver did not hold, each counted by one pass only. */
  foundMissing: number;
  /** Resends made. */
  resent: number;
  /** Resent deliveries the receiver now holds (this pass's, or an earlier pass's that arrived since). */
  recovered: number;
  /** Missing deliveries no resend can bring (CRM, a record gone, a refused reactivation). */
  notRecoverable: number;
  /** Spans of the window the service no longer shows (CRM: beyond the 50 most recent; email: 90 days). */
  historyGap: number;
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
  /** The deliveries a pass looks at: first attempt at or after `from`, last attempt before `to` (ISO). */
  window: { from: string; to: string };
  startedAt: string;
  finishedAt: string;
  /**
   * `done`; `skipped` (another reconciler works or worked this window: `reason` says which);
   * `unreachable` (the service did not answer: the next pass comes after a backoff); `stopped` (a
   * failure that concerns every call, such as a refused credential, or a rate limit past the cap).
   */
  status: 'done' | 'skipped' | 'unreachable' | 'stopped';
  reason: string | null;
  counts: ReconcileCounts;
  /** Every delivery found missing by this pass, oldest first. */
  missing: ReconcileItem[];
  /** Deliveries an earlier pass resent that the receiver holds now (counted as recovered). */
  arrived: string[];
  /** Email webhooks the pass reactivated. */
  reactivated: string[];
  gaps: Array<RecoveryGap & { webhookId: string }>;
  /** Why the pass did not finish (`unreachable`, `stopped`). */
  error: { code: WebhookErrorCode | 'aborted'; message: string } | null;
  /** When the next pass runs, epoch ms (null when the reconciler is not started or stopping). */
  nextRunAt: number | null;
}
