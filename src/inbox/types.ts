/**
 * The database inbox's vocabulary: a row per delivery, its statuses, and the filters of the library
 * functions (list, show, re-drive, purge) and the `svc-webhooks inbox` command.
 */

/**
 * Where a delivery is in the inbox: `received` → `processing` → `handled`, or `failed` (retried at
 * `runAt`) → `dead` after the worker's `maxAttempts`; `quarantined` (authentic, but its payload failed
 * the schema); `superseded` (older than an event of its ordering key already handled: never run).
 *
 * @example
 * ```ts
 * const waiting: InboxStatus[] = ['received', 'failed'];
 * ```
 */
export type InboxStatus =
  | 'received'
  | 'processing'
  | 'handled'
  | 'failed'
  | 'dead'
  | 'quarantined'
  | 'superseded';

/** Every status, in the order of the life of a row. */
export const INBOX_STATUSES: readonly InboxStatus[] = [
  'received',
  'processing',
  'handled',
  'failed',
  'dead',
  'quarantined',
  'superseded',
];

/**
 * One delivery in the inbox, without its body (see {@link InboxRowDetail}). Times are epoch ms.
 *
 * @example
 * ```ts
 * const { rows }: { rows: InboxRow[] } = await inbox.list({ status: 'dead' });
 * for (const row of rows) console.log(row.id, row.event, row.lastErrorCode);
 * ```
 */
export interface InboxRow {
  id: number;
  /** The dedup key (`mail:…`, `crm:…`): one row per delivery, whatever the number of copies. */
  dedupKey: string;
  service: string;
  event: string;
  deliveryId: string;
  /** The event's own timestamp (the body's `timestamp`), or its receipt when it has none. */
  eventAt: number;
  /** Rows of one key run one at a time in `eventAt` order (docs/inbox-ordering.md "Ordering"); null for none. */
  orderingKey: string | null;
  status: InboxStatus;
  /** Runs started (a run cut short by a crash counts). */
  attempts: number;
  /** When a `received` or `failed` row may run. */
  runAt: number;
  /** While `processing`: when the run's lease ends and another worker may take the row. */
  leaseUntil: number | null;
  /** The fencing token: raised by every claim; a run whose token is stale changes nothing. */
  fence: number;
  /** The last failure's `WebhookError` code and message: never a secret, never body bytes. */
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  receivedAt: number;
  handledAt: number | null;
  /**
   * Present only on a row holding what the inbox never writes (a hand edit, another program): which
   * columns and why, e.g. `run_at is not a time in epoch ms.` Such a row is still listed, its other
   * fields read as they are (a number that is no whole number is `NaN`); the worker moves it to `dead`
   * with `job_invalid` when it claims it, and never runs it (docs/inbox-operate.md "Malformed rows").
   */
  malformed?: string;
}

/**
 * An {@link InboxRow} with the verified body bytes and the headers that run it again.
 *
 * @example
 * ```ts
 * const row: InboxRowDetail | undefined = await inbox.show(42);
 * if (row) console.log(new TextDecoder().decode(row.body));
 * ```
 */
export interface InboxRowDetail extends InboxRow {
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * Which rows a list or a re-drive covers; every field narrows.
 *
 * @example
 * ```ts
 * const filter: InboxFilter = { status: 'dead', service: 'crm', event: 'deal.won' };
 * ```
 */
export interface InboxFilter {
  status?: InboxStatus | undefined;
  service?: string | undefined;
  event?: string | undefined;
  orderingKey?: string | undefined;
}

/**
 * Options of `inbox.list`: a filter and a bounded page (newest first).
 *
 * @example
 * ```ts
 * let page = await inbox.list({ status: 'handled', limit: 100 });
 * while (page.next !== undefined) page = await inbox.list({ status: 'handled', limit: 100, before: page.next });
 * ```
 */
export interface InboxListOptions extends InboxFilter {
  /** Rows per page, 1 to 500. Default 50. */
  limit?: number | undefined;
  /** Rows with an id below this one (the `next` of the previous page). */
  before?: number | undefined;
}

/**
 * A page of `inbox.list`.
 *
 * @example
 * ```ts
 * const page: InboxPage = await inbox.list();
 * ```
 */
export interface InboxPage {
  rows: InboxRow[];
  /** Pass as `before` for the next page; absent on the last one. */
  next?: number;
}

/**
 * The depth of an inbox table (`inbox.stats()`): rows by status, and how long the oldest pending
 * (`received`, `failed` or `processing`) row has waited since its receipt.
 *
 * @example
 * ```ts
 * const { rows, oldestPendingAgeMs }: InboxStats = await inbox.stats();
 * if (rows.quarantined > 0 || (oldestPendingAgeMs ?? 0) > 60_000) console.warn('webhook inbox needs a look');
 * ```
 */
export interface InboxStats {
  /** Rows in each status (every status present, 0 for none). */
  rows: Record<InboxStatus, number>;
  /** Milliseconds since the receipt of the oldest pending row; `null` when none is pending. */
  oldestPendingAgeMs: number | null;
  /**
   * Payload drift seen at receipt (docs/inbox-observability.md "Payload drift"), by service, event and path: the
   * JSON paths of payloads that their schema does not know (`tier`, `data.owner`, `items[].sku`), and
   * `""` for an event this version does not know; never values. `deliveries` counts each verified
   * delivery received with it (a service's retry counts again, as `svc_webhooks.drift` does); times
   * are epoch ms. Past 1,000 (service, event, path) rows, a new path is counted as `_other`.
   */
  drift: {
    service: string;
    event: string;
    path: string;
    deliveries: number;
    firstSeenAt: number;
    lastSeenAt: number;
  }[];
}
