import type { WebhookErrorCode } from '../shared/errors.js';
import type { CrmClient } from './crm-client.js';
import type { MailClient } from './mail-client.js';

/**
 * Options of {@link recoverFailedDeliveries}.
 *
 * @example
 * ```ts
 * const options: RecoveryOptions = { client: mail, since: '2h', onProgress: (p) => console.log(p.done, p.total) };
 * ```
 */
export interface RecoveryOptions {
  /** A client from `createMailClient` or `createCrmClient`. */
  client: MailClient | CrmClient;
  /**
   * Where the outage began: epoch ms, a `Date`, an ISO 8601 string, or a duration before now
   * (`'90m'`, `'2h'`, `'7d'`).
   */
  since: number | Date | string;
  /** Only these webhooks. Default: every webhook the credential can list. */
  webhookIds?: readonly string[];
  /** Email: reactivate paused webhooks before retrying. Default true. */
  reactivate?: boolean;
  /**
   * A delivery whose last attempt is younger than this may still be retried by the service itself
   * (email-service §6 rule 4: attempts at 0, ~1 and ~2 minutes); it is reported `pending`, not
   * retried. Paused webhooks have no such retries. Default 180 000 (3 minutes).
   */
  settleMs?: number;
  /** Report what would be done, change nothing. Default false. */
  dryRun?: boolean;
  /** Epoch ms now (to resolve `since` and `settleMs`). Default `Date.now`; pass the emulator's clock in tests. */
  now?: () => number;
  /**
   * Email: the most pages of delivery records listed per webhook (100 records a page asked for), and
   * so at most `maxPages` × 100 records; past either the run rejects with `page_limit_exceeded`, as
   * it does for a repeated cursor (`response_invalid`). Bounds a service that never stops paging.
   * Default 1000.
   */
  maxPages?: number;
  /** Called after each step, for progress bars. */
  onProgress?: (progress: RecoveryProgress) => void;
  /**
   * Stops the run: while listing, the call rejects with `signal.reason` (nothing was changed yet);
   * once reactivating or retrying, the report so far is returned with `stopped` and the rest `skipped`.
   */
  signal?: AbortSignal;
}

/**
 * A step of a recovery run, for progress output.
 *
 * @example
 * ```ts
 * const onProgress = (p: RecoveryProgress) => {
 *   if (p.phase === 'retry') process.stderr.write(`\r${p.done}/${p.total} ${p.outcome}`);
 * };
 * ```
 */
export type RecoveryProgress =
  | { phase: 'list'; webhookId: string; done: number; total: number }
  | { phase: 'reactivate'; webhookId: string; done: number; total: number }
  | {
      phase: 'retry';
      webhookId: string;
      deliveryId: string;
      outcome: RecoveryOutcome;
      /** Retries finished so far across the run, and how many the run will make. */
      done: number;
      total: number;
    }
  | { phase: 'done'; done: number; total: number };

/**
 * What happened to one failed delivery.
 *
 * @example
 * ```ts
 * const outcome: RecoveryOutcome = item.outcome; // 'succeeded' | 'still_failing' | …
 * ```
 *
 * @example
 * ```ts
 * import type { RecoveryOutcome } from '@svc/webhooks/manage';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: RecoveryOutcome): RecoveryOutcome {
 *   return value;
 * }
 * ```
 */
export type RecoveryOutcome =
  | 'succeeded'
  | 'still_failing'
  | 'unconfirmed'
  | 'not_recoverable'
  | 'pending'
  | 'skipped';

/**
 * One failed delivery in a {@link RecoveryReport}.
 *
 * @example
 * ```ts
 * for (const item of report.stillFailing) console.log(item.deliveryId, item.statusCode, item.error);
 * ```
 *
 * @example
 * ```ts
 * import type { RecoveryItem } from '@svc/webhooks/manage';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: RecoveryItem): RecoveryItem {
 *   return value;
 * }
 * ```
 */
export interface RecoveryItem {
  webhookId: string;
  deliveryId: string;
  event: string | null;
  outcome: RecoveryOutcome;
  /** The HTTP status of the latest attempt (the retry's, when one was made); 0 when none came back. */
  statusCode: number | null;
  /** ISO time of the delivery's latest attempt before the run. */
  lastAttemptAt: string | null;
  /** Why it was not retried, or why the retry failed. */
  reason?: string;
  /** The error code, when a call failed with a `WebhookError`. */
  code?: WebhookErrorCode;
}

/**
 * A span of time whose deliveries the service no longer lists, so failures in it cannot be found:
 * CRM history beyond the 50 most recent (crm-service §8), email records older than 90 days (§8).
 *
 * @example
 * ```ts
 * if (hook.gap) console.warn(`cannot see deliveries between ${hook.gap.from} and ${hook.gap.to}`);
 * ```
 *
 * @example
 * ```ts
 * import type { RecoveryGap } from '@svc/webhooks/manage';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: RecoveryGap): RecoveryGap {
 *   return value;
 * }
 * ```
 */
export interface RecoveryGap {
  /** ISO start (the run's `since`). */
  from: string;
  /** ISO end: the oldest delivery still listed (CRM), or now minus 90 days (email). */
  to: string;
  reason: 'history_limit' | 'retention';
}

/**
 * The outcome of one webhook in a recovery run.
 *
 * @example
 * ```ts
 * const paused = report.webhooks.filter((w: WebhookRecovery) => w.reactivated);
 * ```
 */
export interface WebhookRecovery {
  webhookId: string;
  url: string | null;
  /** The email webhook was paused and the run reactivated it. */
  reactivated: boolean;
  /** Failed deliveries found since `since` (each counted once, whatever its attempts). */
  failed: number;
  items: RecoveryItem[];
  gap: RecoveryGap | null;
}

/**
 * The report of {@link recoverFailedDeliveries}: per webhook, then the items grouped by outcome.
 *
 * @example
 * ```ts
 * const report: RecoveryReport = await recoverFailedDeliveries({ client: mail, since: '2h' });
 * console.log(`${report.succeeded.length}/${report.retried.length} recovered`);
 * ```
 */
export interface RecoveryReport {
  service: 'mail' | 'crm';
  /** ISO start of the window. */
  since: string;
  dryRun: boolean;
  webhooks: WebhookRecovery[];
  /** Every delivery a retry was sent for (each once). */
  retried: RecoveryItem[];
  /** The retry was answered 2xx by the receiver. */
  succeeded: RecoveryItem[];
  /** The retry failed again (the receiver still answers non-2xx, or nothing). */
  stillFailing: RecoveryItem[];
  /** The service accepted the retry but did not say how it went. */
  unconfirmed: RecoveryItem[];
  /** Cannot be resent: the CRM has no resend route, the record is gone, the webhook was deleted… */
  notRecoverable: RecoveryItem[];
  /** Still inside the service's own retry schedule; not retried (see `settleMs`). */
  pending: RecoveryItem[];
  /** Not tried: the run stopped first, or `dryRun` (the reason says which). */
  skipped: RecoveryItem[];
  /** Set when the run stopped early (abort, a rate-limit wait above the cap); the rest was not tried. */
  stopped: { code: WebhookErrorCode | 'aborted'; message: string } | null;
}
