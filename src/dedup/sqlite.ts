/**
 * @module
 * `@svc/webhooks/sqlite`: a durable {@link DedupStore} in a SQLite file, for a receiver on one host
 * (one process or several sharing the file). Opens the file with the runtime's own SQLite (bun:sqlite
 * on Bun, node:sqlite on Node 22.13+ and Deno, better-sqlite3 elsewhere), or uses a database you opened.
 */
import { type Clock, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { answerFromRow, type ClaimRow } from './claim-row.js';
import {
  openSqlite,
  type SqliteDatabaseLike,
  type SqliteStatementLike,
  whileLocked,
} from './sqlite-driver.js';
import { DEFAULT_SQLITE_TABLE, PRUNE_BATCH, sqliteDedupDDL, sqliteStatements } from './sqlite-sql.js';
import { callTimeout, storeUnavailable } from './store-error.js';
import { badRowWarning, type ClaimAttempt, storeFromBackend } from './store-kit.js';
import type { AbandonOptions, ClaimOptions, DedupStore, StoreCallOptions } from './types.js';

/**
 * Options of {@link createSqliteStore}: a `path` to open, or an open `database`.
 *
 * @example
 * ```ts
 * const options: SqliteStoreOptions = { path: '/var/lib/shop/webhook-dedup.sqlite', callTimeoutMs: 2_000 };
 * ```
 */
export interface SqliteStoreOptions {
  /**
   * The database file, created if missing, opened in WAL mode and closed by {@link SqliteStore.close}.
   * `':memory:'` is a database of this store alone (forgotten on exit).
   */
  path?: string;
  /**
   * For a `path`: when a write counts as done. `'normal'` (default): it survives the process crashing
   * (killed, out of memory, an uncaught exception); power lost within a moment of it may undo it (a
   * retry then runs the handler again). `'full'`: it survives the machine losing power too, at the
   * cost of one fsync per claim and per completion, which blocks the thread (milliseconds on most
   * disks, against microseconds).
   */
  synchronous?: 'normal' | 'full';
  /**
   * An open database instead of `path`: a better-sqlite3 `Database`, a node:sqlite `DatabaseSync` or a
   * bun:sqlite `Database`. Used as it is (the store sets no pragma on it) and never closed by the store.
   * Its `busy_timeout` is how long one statement may block the thread on a locked file (better-sqlite3
   * defaults to 5 s, past the receiver's `storeTimeoutMs`): keep it short (20 to 100 ms); the store
   * waits longer without blocking, up to each call's bound.
   */
  database?: SqliteDatabaseLike;
  /** Table name: letters, digits and underscores. Created if missing. Default `'webhook_dedup'`. */
  table?: string;
  /** Source of time in epoch ms; default the wall clock. Inject one for tests (a virtual clock). */
  clock?: Clock;
  /**
   * Longest wait for the database's write lock (held by another process or connection) before a call
   * fails with `store_unavailable`, in ms; `0` for no bound. Default 3000. It applies to calls made
   * without a `callTimeoutMs` of their own (your code calling the store directly): a receiver passes its
   * `storeTimeoutMs` (default 2000) with every call it makes, and that one decides.
   */
  callTimeoutMs?: number;
}

/**
 * The SQLite store: a {@link DedupStore} with `abandon`, `extend`, `prune` and `close`.
 *
 * @example
 * ```ts
 * import { createSqliteStore } from '@svc/webhooks/sqlite';
 *
 * const store = createSqliteStore({ path: 'webhook-dedup.sqlite' });
 * console.log(await store.prune(), 'expired records deleted');
 * await store.close();
 * ```
 */
export interface SqliteStore extends DedupStore {
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
  /** Deletes expired claims and completed records, a batch at a time; returns how many. */
  prune(): Promise<number>;
  /** Closes the database the store opened from `path` (not one passed as `database`). */
  close(): Promise<void>;
}

type Row = { token: unknown; completed: unknown; expires_at: unknown };

// No blocking wait inside SQLite for a lock another connection holds: the store retries itself
// without blocking the event loop (whileLocked), until the call's time bound.
const BUSY_TIMEOUT_MS = 0;
// Every so many granted claims, prune() runs once the claim is answered, so a file nobody prunes
// stays the size of its live records.
const SWEEP_EVERY = 500;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const isWhole = (value: unknown): value is number | bigint =>
  typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value));

/** The row as the kit reads it, or `undefined` for a row this store cannot read (sqlite-sql.ts `readable`). */
function claimRow(row: Row, now: number): ClaimRow | undefined {
  const { token, completed, expires_at } = row;
  if (typeof token !== 'string' || !isWhole(expires_at) || !isWhole(completed)) return undefined;
  const done = Number(completed);
  if (done !== 0 && done !== 1) return undefined;
  return { token, completed: done === 1, expiresAt: Number(expires_at), now };
}

/**
 * A {@link DedupStore} in a SQLite table: durable across restarts and crashes, shared by every process
 * that opens the same file on one host. A claim of a free key is one `INSERT … ON CONFLICT (key) DO
 * NOTHING` (atomic: SQLite runs one writer at a time, across processes too); a key found taken is read,
 * and taken over by a guarded `UPDATE` once its record expired. complete, release and extend are
 * single-row statements guarded by the fencing token. Every write runs to its commit, so a full disk
 * or a read-only file fails the call. A call that
 * finds the file locked by another writer retries until its time bound without blocking the event
 * loop; a failure or a bound reached is `WebhookError('store_unavailable')` (503): the receiver fails
 * closed and the sender retries. Expired records are swept as claims come in, and by `prune()`.
 *
 * Not for several hosts (a network file system breaks SQLite's locks): use Redis or Postgres there.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createSqliteStore } from '@svc/webhooks/sqlite';
 *
 * // Remembers handled deliveries across restarts: a retry after a redeploy does not run twice.
 * const dedup = createSqliteStore({ path: process.env.SVC_DEDUP_FILE ?? 'webhook-dedup.sqlite' });
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, dedup });
 * ```
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { createSqliteStore } from '@svc/webhooks/sqlite';
 *
 * const db = new Database('app.sqlite', { timeout: 50 }); // busy_timeout: block at most 50 ms
 * db.pragma('journal_mode = WAL');
 * const dedup = createSqliteStore({ database: db, table: 'webhook_dedup' });
 * ```
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const {
    path,
    database,
    synchronous = 'normal',
    table = DEFAULT_SQLITE_TABLE,
    clock = systemClock,
    callTimeoutMs = 3_000,
  } = options;
  if ((path === undefined) === (database === undefined)) {
    throw new WebhookError(
      'options_invalid',
      'createSqliteStore: give either `path` (a file to open) or `database` (an open better-sqlite3, node:sqlite or bun:sqlite database).',
    );
  }
  if (
    database !== undefined &&
    (typeof database?.exec !== 'function' || typeof database.prepare !== 'function')
  ) {
    throw new WebhookError(
      'options_invalid',
      'createSqliteStore: `database` must be an open better-sqlite3, node:sqlite or bun:sqlite database (exec and prepare methods).',
    );
  }
  if (path !== undefined && (typeof path !== 'string' || path.length === 0)) {
    throw new WebhookError('options_invalid', 'createSqliteStore: `path` must be a non-empty file name.');
  }
  if (synchronous !== 'normal' && synchronous !== 'full') {
    throw new WebhookError('options_invalid', "createSqliteStore: `synchronous` must be 'normal' or 'full'.");
  }
  const sql = sqliteStatements(table); // validates the name before anything is opened
  const owned =
    path !== undefined ? openSqlite(path, BUSY_TIMEOUT_MS, synchronous, 'createSqliteStore') : undefined;
  const db = owned ?? (database as SqliteDatabaseLike);
  let prepared: { [K in keyof typeof sql]: SqliteStatementLike };
  try {
    db.exec(sqliteDedupDDL(table));
    prepared = Object.fromEntries(
      Object.entries(sql).map(([name, text]) => [name, db.prepare(text)]),
    ) as typeof prepared;
  } catch (error) {
    try {
      owned?.close();
    } catch {
      // already failing: the first error is the one to report
    }
    throw storeUnavailable('SQLite', error);
  }
  let closed = false;
  let granted = 0;

  const warnBadRow = badRowWarning('SQLite', JSON.stringify(table));

  /** Runs `op` (synchronous statements) while the store is open, waiting out a lock within the bound. */
  function run<T>(op: () => T, options?: StoreCallOptions): Promise<T> {
    return whileLocked(op, callTimeout(options, callTimeoutMs), () => closed);
  }

  /** Runs a writing statement to its end; `true` when it wrote a row. */
  const wrote = (statement: SqliteStatementLike, ...params: (string | number)[]) =>
    Number(statement.run(...params).changes) > 0;

  function read(key: string, now: number): ClaimRow | null | undefined {
    const row = (prepared.read.get(key) ?? undefined) as Row | undefined; // bun:sqlite: null for none
    if (!row) return null;
    const found = claimRow(row, now);
    if (!found) warnBadRow();
    return found;
  }

  /** One claim attempt: the insert of a free key; on conflict, the row, or its takeover once expired. */
  function claimOnce(key: string, token: string, leaseMs: number): ClaimAttempt {
    const now = clock.now();
    const leaseEndsAt = now + leaseMs;
    if (wrote(prepared.claim, key, token, leaseEndsAt)) return { status: 'claimed', token, leaseEndsAt };
    const row = read(key, now);
    if (row === null) return undefined; // released in between: ask again
    if (row && answerFromRow(row, token)) return row;
    // Expired, or unreadable: take it over, unless it changed in between (then ask again).
    if (wrote(prepared.takeover, token, leaseEndsAt, key, token, now))
      return { status: 'claimed', token, leaseEndsAt };
    return undefined;
  }

  async function pruneBatches(): Promise<number> {
    let removed = 0;
    for (;;) {
      const now = clock.now();
      const batch = await run(() => Number(prepared.prune.run(now, now, PRUNE_BATCH).changes));
      removed += batch;
      if (batch < PRUNE_BATCH) return removed;
      await sleep(0); // let deliveries in between batches
    }
  }

  function sweepSoon(): void {
    const timer = setTimeout(() => {
      if (!closed) pruneBatches().catch(() => {}); // best effort: prune() reports its errors
    }, 0) as { unref?: () => void };
    timer.unref?.();
  }

  const store = storeFromBackend({
    name: 'SQLite',
    async claim(key, token, leaseMs, options) {
      const tried = await run(() => claimOnce(key, token, leaseMs), options);
      if (tried && 'status' in tried && tried.status === 'claimed' && ++granted % SWEEP_EVERY === 0)
        sweepSoon();
      return tried;
    },
    complete(key, token, ttlMs, options) {
      const now = clock.now();
      return run(() => wrote(prepared.complete, now + ttlMs, key, token, now), options);
    },
    release: (key, token, options) => run(() => wrote(prepared.release, key, token, clock.now()), options),
    abandon(key, token, leaseMs, options) {
      const now = clock.now();
      return run(() => {
        for (let attempt = 0; attempt < 5; attempt++) {
          if (wrote(prepared.abandon, key, token, -(now + leaseMs), now)) return true;
          const row = read(key, now);
          // A live completed record: a late claim with this token is a duplicate (true). Another
          // token's live lease: not settled yet (false). Gone in between: write the marker again.
          if (row !== null) return row?.completed === true;
        }
        throw new Error('abandon did not settle after 5 attempts');
      }, options);
    },
    extend(key, token, leaseMs, options) {
      const now = clock.now();
      return run(() => wrote(prepared.extend, now + leaseMs, key, token, now), options);
    },
  });

  return {
    ...store,
    prune: pruneBatches,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      owned?.close();
    },
  };
}
