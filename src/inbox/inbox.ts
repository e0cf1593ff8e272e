/**
 * The inbox over either database: the hand-off target a receiver writes to (one row per delivery, by
 * dedup key), the library functions (list, show, re-drive, purge), and the queue operations its
 * worker uses (claim, supersede, extend, settle), reached through {@link queueOf}.
 */

import type { EnqueueResult, HandoffRunner, HandoffTarget } from '../handoff/job/types.js';
import type { DeliveryInbox, InboxReceipt } from '../receiver/inbox-receipt.js';
import type { Clock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { createCompletions } from './completions.js';
import type { DbRow, InboxDb } from './db.js';
import { countDrift, driftStatements, readDrift } from './drift.js';
import { heldDeliveries } from './held.js';
import { boundedKey, defaultOrderingKey, eventTime, type OrderingInput, storedKey } from './ordering.js';
import { type RedriveRows, type RedriveTarget, redriveThrough } from './redrive.js';
import { toDetail, toRow } from './rows.js';
import { completeStatement, inboxStatements, notifyChannel, ROW_COLUMNS } from './sql.js';
import {
  INBOX_STATUSES,
  type InboxFilter,
  type InboxListOptions,
  type InboxPage,
  type InboxRowDetail,
  type InboxStats,
  type InboxStatus,
} from './types.js';
import type { WriteTurns } from './write-turns.js';

const DAY_MS = 86_400_000;
const PURGE_BATCH = 1_000;
/** Statuses a re-drive moves back to `received`: never `handled` (its effects happened) or `processing`. */
const REDRIVABLE = ['failed', 'dead', 'quarantined', 'superseded'] as const;
/** A re-drive's error columns: cleared, but a quarantined row's kept (its schema issues). */
const KEEP_QUARANTINED = ['last_error_code', 'last_error_message']
  .map((column) => `${column} = CASE WHEN status = 'quarantined' THEN ${column} END`)
  .join(', ');

/**
 * A database inbox: give it to a receiver as `handoff`, and each verified delivery is one row of a
 * table in your database (not a queue job: `enqueue(job)` refuses with `options_invalid`, as a job
 * carries no signature to authenticate a row by), plus the functions to look at and re-drive them.
 *
 * @example
 * ```ts
 * const dead = await inbox.list({ status: 'dead' });
 * await inbox.redrive({ status: 'dead', event: 'deal.won' });
 * await inbox.purge({ olderThanDays: 90 });
 * ```
 */
export interface Inbox extends HandoffTarget {
  /** `'postgres'` or `'sqlite'`. */
  readonly dialect: 'postgres' | 'sqlite';
  /** Creates the table and its indexes if missing. Idempotent. */
  migrate(): Promise<void>;
  /** Rows matching the filter, newest first, a bounded page at a time (without bodies). */
  list(options?: InboxListOptions): Promise<InboxPage>;
  /** One row with its body and headers, or `undefined`. */
  show(id: number): Promise<InboxRowDetail | undefined>;
  /**
   * The ids among `deliveryIds` of `service` (`'mail'`, `'crm'`) that have a row, whatever its status:
   * the deliveries the receiver stored. What a reconciler (`createReconciler` of
   * `@svc/webhooks/manage`) compares the service's delivery log with; the inbox itself is its
   * `holder`. Rows are found by the `'delivery-id'` dedup key (the unique index), and the ids left by
   * the row's delivery id.
   */
  held(service: string, deliveryIds: readonly string[]): Promise<Set<string>>;
  /**
   * Moves rows back to `received` (attempts reset) so the worker runs them again: one row by `id`, or
   * every `failed`, `dead`, `quarantined` or `superseded` row matching the filter. Never a `handled`
   * row. Resolves how many rows moved. With `receiver` (the app's, with its `repair`), only rows of its
   * service, and each quarantined one is first checked by it (signature, schema, repair; no handler
   * runs): it moves only if it now parses, and otherwise stays `quarantined` with its latest and first
   * issues (docs/inbox.md "When the payload changes").
   */
  redrive(target: { id: number } | InboxFilter, options?: { receiver?: HandoffRunner }): Promise<number>;
  /**
   * The table's depth: rows by status, and the age of the oldest pending (`received`, `failed`,
   * `processing`) row in ms, `null` when none is pending. What `createInboxMetrics` of
   * `@svc/webhooks/otel` reports. One scan of the table: call it every few seconds at most. With
   * `drift`: the payload drift counted at receipt, by service, event and path (docs/inbox.md).
   */
  stats(): Promise<InboxStats>;
  /** Deletes `handled` and `superseded` rows handled more than `olderThanDays` ago (default 90); returns how many. */
  purge(options?: { olderThanDays?: number }): Promise<number>;
  /** Closes the connection the inbox opened itself (SQLite `path`); a client you passed stays open. */
  close(): Promise<void>;
}

/**
 * Options every inbox takes, on either database.
 *
 * @example
 * ```ts
 * const options: InboxCommonOptions = { table: 'webhook_inbox', orderingKey: () => null };
 * ```
 */
export interface InboxCommonOptions {
  /** Table name. Default `'webhook_inbox'`. */
  table?: string;
  /** Source of time in epoch ms; default the wall clock (hosts sharing a table keep theirs in sync). */
  clock?: Clock;
  /**
   * The ordering key of a delivery, from its service, event and parsed body; `null` for none. Default:
   * the CRM's deal, contact, campaign and journey enrollment ids, the email service's `message_id`.
   */
  orderingKey?: (input: OrderingInput) => string | null | undefined;
  /** Longest wait for one statement before it fails with `store_unavailable`, in ms. Default 3000. */
  callTimeoutMs?: number;
}

/** What the worker needs of an inbox. */
export interface InboxQueue {
  readonly db: InboxDb;
  readonly clock: Clock;
  readonly table: string;
  /** The table's statements (direct mode inlines the stale guard's). */
  readonly statements: ReturnType<typeof inboxStatements>;
  /** PostgreSQL: the LISTEN/NOTIFY channel of the table. */
  readonly channel: string;
  /** SQLite: the turns at the file's write lock, which a worker's transactions take too. */
  readonly turns?: WriteTurns | undefined;
  /** Claims up to `limit` runnable rows of `service`. */
  claim(limit: number, leaseMs: number, service: string): Promise<DbRow[]>;
  supersede(id: number, fence: number): Promise<boolean>;
  extend(id: number, fence: number, leaseMs: number): Promise<boolean>;
  settle(
    id: number,
    fence: number,
    to: { status: 'failed' | 'dead'; runAt: number; code: string; message: string; refund: boolean },
  ): Promise<boolean>;
  complete(id: number, fence: number): string;
  /**
   * Moves a claimed row to `handled` on the inbox's own connection (no transaction adapter), with the
   * other rows finishing in the same turn (completions.ts); resolves whether its fence still held.
   */
  completeOwn(id: number, fence: number): Promise<boolean>;
  /**
   * Puts a claimed row that never ran back as its claim found it (`row`: the claim's copy): waiting,
   * or `failed` with its error, its attempt refunded, due at its own time.
   */
  release(id: number, fence: number, row: DbRow): Promise<boolean>;
  /** Puts a claimed row back to `quarantined` with `code` and `message` (an authentic row that still fails). */
  quarantine(id: number, fence: number, code: string, message: string): Promise<boolean>;
  /**
   * Direct mode: the state of the delivery's row, inserted first (`received`, due for a worker only
   * after `delayMs`) unless its dedup key has one.
   */
  admit(receipt: InboxReceipt, delayMs: number): Promise<DbRow>;
  /** A row's state (id, status, attempts, fence, lease) by dedup key. */
  state(dedupKey: string): Promise<DbRow | undefined>;
  /** Direct mode: records a failed run (after its transaction rolled back) on the row at `fence`. */
  record(
    id: number,
    fence: number,
    to: { status: 'failed' | 'dead'; runAt: number; code: string; message: string },
  ): Promise<boolean>;
}

const queues = new WeakMap<Inbox, InboxQueue>();

/** The queue operations of an inbox made by this library. */
export function queueOf(inbox: Inbox): InboxQueue {
  const queue = queues.get(inbox);
  if (!queue) {
    throw new WebhookError(
      'options_invalid',
      'createInboxWorker: `inbox` must come from createPostgresInbox or createSqliteInbox.',
    );
  }
  return queue;
}

const decoder = new TextDecoder();

/**
 * A message as the table's text columns store it: U+0000 (in a handler's error message, in a key of a
 * schema issue's path) as the visible escape `\u0000`, since PostgreSQL text cannot hold it; at
 * most 500 characters.
 */
function storedMessage(message: string): string {
  return message.replaceAll('\u0000', '\\u0000').slice(0, 500);
}

/**
 * The JSON body as the ordering key and event time read it: the receiver's own parse (the email
 * event's `payload`, the CRM event's `envelope`: the schemas keep unknown fields), else parsed from
 * the bytes (a quarantined delivery the service's parse could not read without its schema).
 */
function payloadOf(receipt: InboxReceipt): unknown {
  const event = receipt.event as { payload?: unknown; envelope?: unknown };
  const parsed = receipt.service === 'crm' ? event.envelope : event.payload;
  if (parsed !== undefined) return parsed;
  try {
    return JSON.parse(decoder.decode(receipt.body));
  } catch {
    return undefined; // a body that does not parse is refused by the receiver before it gets here
  }
}

/** What a receipt's insert that wrote `changes` rows (1, or 0: the dedup key had one) answers. */
const storedAs = (changes: number): EnqueueResult => (changes === 0 ? 'duplicate' : 'enqueued');

const notForJobs = () =>
  Promise.reject(
    new WebhookError(
      'options_invalid',
      'The inbox stores the deliveries a receiver verified (give it to the receiver as `handoff`); it does not take queue jobs, which carry no signature to authenticate a row by.',
    ),
  );

/** Builds an inbox over `db`. */
export function createInbox(
  db: InboxDb,
  options: InboxCommonOptions,
  clock: Clock,
  table: string,
  turns?: WriteTurns,
): Inbox {
  const sql = inboxStatements(table, db.dialect);
  const driftSql = driftStatements(table, db.dialect);
  const { orderingKey = defaultOrderingKey } = options;

  function where(filter: InboxFilter, params: unknown[]): string[] {
    const conditions: string[] = [];
    const add = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      // No stored service or event holds U+0000 (headers cannot carry it), and PostgreSQL refuses it.
      if (value.includes('\u0000'))
        throw new WebhookError('options_invalid', `inbox: the ${column} filter must not contain U+0000.`);
      params.push(value);
      conditions.push(`${column} = $${params.length}`);
    };
    if (filter.status !== undefined && !INBOX_STATUSES.includes(filter.status))
      throw new WebhookError('options_invalid', `inbox: unknown status ${JSON.stringify(filter.status)}.`);
    add('status', filter.status);
    add('service', filter.service);
    add('event', filter.event);
    add('ordering_key', filter.orderingKey === undefined ? undefined : storedKey(filter.orderingKey));
    return conditions;
  }

  /** The insert's parameters for the delivery's row. */
  function rowOf(receipt: InboxReceipt, delayMs: number): unknown[] {
    const payload = payloadOf(receipt);
    const { service, event, quarantine: problem } = receipt;
    const now = clock.now();
    return [
      receipt.dedupKey,
      service,
      event.name,
      event.deliveryId,
      eventTime(payload, receipt.receivedAt),
      boundedKey(orderingKey({ service, event: event.name, payload })),
      problem ? 'quarantined' : 'received',
      now + delayMs,
      receipt.receivedAt,
      JSON.stringify(receipt.headers),
      receipt.route === null ? null : JSON.stringify(receipt.route),
      receipt.traceparent,
      receipt.body,
      problem?.code ?? null,
      problem ? storedMessage(problem.message) : null,
    ];
  }

  /** Inserts the delivery's row unless its dedup key has one; resolves the new row's id, or undefined. */
  async function insert(receipt: InboxReceipt, delayMs = 0): Promise<unknown> {
    const rows = await db.query(sql.insert, rowOf(receipt, delayMs));
    return rows[0]?.id;
  }

  /** The conditions of a re-drive target (one row, or a filter), its parameters pushed on `params`. */
  function targetOf(target: RedriveTarget, params: unknown[]): string[] {
    if (!('id' in target)) return where(target, params);
    params.push(target.id);
    return [`id = $${params.length}`];
  }

  /** Moves the target's rows in `statuses` (of `service`, when given) back to `received`. */
  async function move(target: RedriveTarget, statuses: readonly string[], service?: string): Promise<number> {
    if (statuses.length === 0) return 0;
    const params: unknown[] = [clock.now()];
    const conditions = targetOf(target, params);
    if (service !== undefined) {
      params.push(service);
      conditions.push(`service = $${params.length}`);
    }
    conditions.push(`status IN (${statuses.map((s) => `'${s}'`).join(', ')})`);
    const rows = await db.query(
      // A quarantined row keeps its issues: if it fails again, the worker keeps the first ones too.
      `UPDATE ${sql.table} SET status = 'received', run_at = $1, attempts = 0, lease_until = NULL, ${KEEP_QUARANTINED}, handled_at = NULL WHERE ${conditions.join(' AND ')} RETURNING id`,
      params,
    );
    return rows.length;
  }

  const redriveRows: RedriveRows = {
    move: (target, only) => move(target, only.statuses, only.service),
    async quarantined(target, service, after, limit) {
      const params: unknown[] = [];
      const conditions = targetOf(target, params);
      params.push(service, after, limit);
      const n = params.length;
      return db.query(
        `SELECT * FROM ${sql.table} WHERE ${[...conditions, `service = $${n - 2}`, "status = 'quarantined'", `id > $${n - 1}`].join(' AND ')} ORDER BY id LIMIT $${n}`,
        params,
      );
    },
    release: async (id) => (await move({ id }, ['quarantined'])) === 1,
    async keep(id, code, message) {
      await db.query(
        `UPDATE ${sql.table} SET last_error_code = $2, last_error_message = $3 WHERE id = $1 AND status = 'quarantined' RETURNING id`,
        [id, code, storedMessage(message)],
      );
    },
  };

  /**
   * The receipt's insert. SQLite writes it at once when its file is free: the answer is a value, no
   * promise (the receiver's bound then has nothing to wait for); PostgreSQL's is a round trip.
   */
  const storeDelivery = (receipt: InboxReceipt): EnqueueResult | Promise<EnqueueResult> => {
    if (db.write === undefined)
      return insert(receipt).then((id) => (id === undefined ? 'duplicate' : 'enqueued'));
    const written = db.write(receipt.quarantine ? sql.storeQuarantined : sql.store, rowOf(receipt, 0));
    return written instanceof Promise ? written.then(storedAs) : storedAs(written);
  };

  const inbox: Inbox & DeliveryInbox = {
    dialect: db.dialect,
    enqueue: notForJobs,
    storeDelivery,
    countDrift: (service, event, paths, timeoutMs) =>
      countDrift(db, driftSql, { service, event, paths, at: clock.now() }, timeoutMs),
    migrate: () => db.exec(sql.ddl),

    async list(listOptions = {}) {
      const { limit = 50, before } = listOptions;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 500)
        throw new WebhookError(
          'options_invalid',
          'inbox.list: `limit` must be a whole number from 1 to 500.',
        );
      const params: unknown[] = [];
      const conditions = where(listOptions, params);
      if (before !== undefined) {
        params.push(before);
        conditions.push(`id < $${params.length}`);
      }
      params.push(limit + 1);
      const text = `SELECT ${ROW_COLUMNS} FROM ${sql.table}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`;
      const rows = (await db.query(text, params)).map(toRow);
      const page: InboxPage = { rows: rows.slice(0, limit) };
      if (rows.length > limit) page.next = page.rows.at(-1)!.id;
      return page;
    },

    async show(id) {
      const [row] = await db.query(sql.show, [id]);
      return row ? toDetail(row) : undefined;
    },

    held: (service, deliveryIds) => heldDeliveries(db, sql.table, service, deliveryIds),

    async redrive(target, redriveOptions) {
      if (
        !('id' in target) &&
        target.status !== undefined &&
        !(REDRIVABLE as readonly string[]).includes(target.status)
      )
        throw new WebhookError(
          'options_invalid',
          `inbox.redrive: rows in status ${target.status} are not re-driven.`,
        );
      const receiver = redriveOptions?.receiver;
      if (receiver === undefined) return move(target, REDRIVABLE);
      return redriveThrough(redriveRows, target, receiver, REDRIVABLE);
    },

    async purge(purgeOptions = {}) {
      const { olderThanDays = 90 } = purgeOptions;
      if (typeof olderThanDays !== 'number' || !(olderThanDays >= 0))
        throw new WebhookError('options_invalid', 'inbox.purge: `olderThanDays` must be a number ≥ 0.');
      const cutoff = clock.now() - Math.round(olderThanDays * DAY_MS);
      let removed = 0;
      for (;;) {
        const batch = (await db.query(sql.purge, [cutoff, PURGE_BATCH])).length;
        removed += batch;
        if (batch < PURGE_BATCH) return removed;
      }
    },

    async stats() {
      const rows = Object.fromEntries(INBOX_STATUSES.map((status) => [status, 0])) as Record<
        InboxStatus,
        number
      >;
      for (const row of await db.query(sql.depth, []))
        if (INBOX_STATUSES.includes(row.status as InboxStatus))
          rows[row.status as InboxStatus] = Number(row.n);
      const [oldest] = await db.query(sql.oldestPending, []);
      const at = oldest?.at;
      const oldestPendingAgeMs =
        at === null || at === undefined ? null : Math.max(0, clock.now() - Number(at));
      return { rows, oldestPendingAgeMs, drift: await readDrift(db, driftSql) };
    },

    close: () => db.close(),
  };

  queues.set(inbox, {
    db,
    clock,
    table: sql.table,
    statements: sql,
    channel: db.dialect === 'postgres' ? notifyChannel(table) : '',
    turns,
    claim: (limit, leaseMs, service) => db.query(sql.claim, [clock.now(), leaseMs, limit, service]),
    supersede: async (id, fence) => (await db.query(sql.supersede, [id, fence, clock.now()])).length === 1,
    extend: async (id, fence, leaseMs) =>
      (await db.query(sql.extend, [id, fence, clock.now() + leaseMs])).length === 1,
    settle: async (id, fence, to) =>
      (
        await db.query(sql.settle, [
          id,
          fence,
          to.status,
          to.runAt,
          to.code,
          storedMessage(to.message),
          to.refund ? 1 : 0,
        ])
      ).length === 1,
    complete: (id, fence) => completeStatement(sql.table, id, fence, clock.now()),
    completeOwn: createCompletions(db, sql, clock),
    release: async (id, fence, row) =>
      (
        await db.query(sql.settle, [
          id,
          fence,
          row.last_error_code == null ? 'received' : 'failed',
          Number(row.run_at),
          row.last_error_code ?? null,
          row.last_error_message ?? null,
          1,
        ])
      ).length === 1,
    quarantine: async (id, fence, code, message) =>
      (await db.query(sql.quarantine, [id, fence, code, storedMessage(message)])).length === 1,
    async admit(receipt, delayMs) {
      // A retry reads its row first: on PostgreSQL an insert that meets a row whose run holds it in an
      // open transaction would wait for that transaction.
      const [known] = await db.query(sql.state, [receipt.dedupKey]);
      if (known) return known;
      // The row just inserted is in the state the DDL's defaults give it: no read back.
      const id = await insert(receipt, delayMs);
      if (id !== undefined) return { id, status: 'received', attempts: 0, fence: 0, lease_until: null };
      // Another copy of the delivery inserted it first.
      const [row] = await db.query(sql.state, [receipt.dedupKey]);
      if (!row) throw new WebhookError('store_unavailable', 'inbox: the row just written is not there.');
      return row;
    },
    state: async (dedupKey) => (await db.query(sql.state, [dedupKey]))[0],
    record: async (id, fence, to) =>
      (await db.query(sql.record, [id, fence, to.status, to.runAt, to.code, storedMessage(to.message)]))
        .length === 1,
  });
  return inbox;
}
