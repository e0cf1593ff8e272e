/**
 * The inbox's own connection to its database, one shape for both dialects: `query(text, params)`
 * with `$n` parameters resolving to rows. Failures and timeouts become `store_unavailable`, naming
 * the inbox. SQLite integers come back as bigints, so a row holding one past 2^53 (a hand edit) is
 * read and shown as malformed (rows.ts) instead of failing the statement that read it.
 */

import { openSqlite, type SqliteDatabaseLike, whileLocked, whileLockedNow } from '../dedup/sqlite-driver.js';
import { storeUnavailable, withTimeout } from '../dedup/store-error.js';
import { runPostgresDDL } from '../shared/pg-ddl.js';
import { queryNamed } from '../shared/pg-named.js';
import { type Dialect, sqliteForm } from './sql.js';
import { createStatementCache } from './statement-cache.js';

export type DbRow = Record<string, unknown>;

/** What `store_unavailable` messages call this store. */
const INBOX = 'inbox';

export interface InboxDb {
  readonly dialect: Dialect;
  /** SQLite: how many prepared statements the connection holds (bounded, statement-cache.ts). */
  readonly statementCount?: () => number;
  query(text: string, params: readonly unknown[], timeoutMs?: number): Promise<DbRow[]>;
  /**
   * SQLite: runs a writing statement that returns no rows and tells how many rows it wrote: at once (a
   * number, no promise) when the file is free, else the promise of `query`'s waits off the loop. Its
   * failures are `query`'s (`store_unavailable`), thrown or rejected.
   */
  write?(text: string, params: readonly unknown[], timeoutMs?: number): number | Promise<number>;
  /** Runs each statement of a DDL text (separated by `;\n`). */
  exec(ddl: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Any PostgreSQL client with `query(text, params)` resolving to `{ rows }`: a `pg` Pool (best: the
 * inbox runs its statements on it concurrently), a `pg` Client, PGlite.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const client: PostgresQueryable = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * ```
 */
export interface PostgresQueryable {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * The inbox's PostgreSQL connection. `names`: the statements sent as named (prepared) ones, by text,
 * on a `pg` client (planned once per connection instead of on every call); any other text, and every
 * text without `names`, goes as `query(text, params)`.
 */
export function postgresDb(
  client: PostgresQueryable,
  callTimeoutMs: number,
  names?: ReadonlyMap<string, string>,
): InboxDb {
  const send = (text: string, params: unknown[]) => {
    const name = names?.get(text);
    return name === undefined ? client.query(text, params) : queryNamed(client, name, text, params);
  };
  async function query(text: string, params: readonly unknown[], timeoutMs = callTimeoutMs) {
    try {
      const result = await withTimeout(send(text, [...params]), timeoutMs, 'Postgres', INBOX);
      return result.rows as DbRow[];
    } catch (error) {
      throw storeUnavailable('Postgres', error, INBOX);
    }
  }
  return {
    dialect: 'postgres',
    query,
    async exec(ddl) {
      await runPostgresDDL(ddl, (statement) => query(statement, []));
    },
    close: async () => {},
  };
}

type Statement = {
  /** better-sqlite3: whether the statement returns rows (`all()` throws on one that does not). */
  readonly reader?: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number | bigint };
  /** node:sqlite */
  setReadBigInts?(on: boolean): unknown;
  /** better-sqlite3, bun:sqlite */
  safeIntegers?(on: boolean): unknown;
};

/**
 * `statement`, reading integers as bigints: node:sqlite and better-sqlite3 throw on an integer past
 * 2^53 otherwise, and one such value in a row would fail every list, show and claim that reads it.
 */
function readingBigInts(statement: Statement): Statement {
  if (typeof statement.setReadBigInts === 'function') statement.setReadBigInts(true);
  else if (typeof statement.safeIntegers === 'function') statement.safeIntegers(true);
  return statement;
}

/**
 * The inbox's SQLite connection: its own, opened from `path` (WAL). Never the connection the app's
 * transactions use: statements of a delivery being acknowledged must not join a handler's open
 * transaction (and roll back with it).
 */
export function sqliteDb(path: string, callTimeoutMs: number, synchronous: 'normal' | 'full'): InboxDb {
  let db: ReturnType<typeof openSqlite> | undefined;
  let closed = false;
  const open = (): SqliteDatabaseLike & { close(): void } => {
    // No busy_timeout: SQLite would block the thread (the event loop) for it on every statement that
    // finds the file locked by another connection; whileLocked waits off the loop instead, as the
    // SQLite dedup store does, up to the call's bound.
    db ??= openSqlite(path, 0, synchronous, 'createSqliteInbox');
    return db;
  };
  // By the statement's `$n` text: its prepared form and the order its parameters bind in, bounded.
  const cache = createStatementCache((text) => {
    const form = sqliteForm(text);
    const statement = readingBigInts(open().prepare(form.text) as unknown as Statement);
    return { statement, order: form.order };
  });
  const isClosed = () => closed;
  return {
    dialect: 'sqlite',
    statementCount: () => cache.size,
    async query(text, params, timeoutMs = callTimeoutMs) {
      try {
        return await whileLocked(
          () => {
            const { statement, order } = cache.get(text);
            // A statement without rows back (an INSERT without RETURNING): run, as better-sqlite3
            // wants; node:sqlite takes `all()` for any statement and has no `reader`.
            if (statement.reader === false) {
              statement.run(...bound(order, params));
              return [];
            }
            return statement.all(...bound(order, params)) as DbRow[];
          },
          timeoutMs,
          isClosed,
          INBOX,
        );
      } catch (error) {
        throw storeUnavailable('SQLite', error, INBOX);
      }
    },
    write(text, params, timeoutMs = callTimeoutMs) {
      // whileLockedNow's errors are store_unavailable already (as query's, naming the inbox).
      return whileLockedNow(
        () => {
          const { statement, order } = cache.get(text);
          return Number(statement.run(...bound(order, params)).changes);
        },
        timeoutMs,
        isClosed,
        INBOX,
      );
    },
    async exec(ddl) {
      try {
        const connection = open();
        await whileLocked(
          () => connection.exec(ddl),
          callTimeoutMs,
          () => closed,
          INBOX,
        );
      } catch (error) {
        throw storeUnavailable('SQLite', error, INBOX);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      cache.clear();
      db?.close();
    },
  };
}

/**
 * `params` in the order a SQLite statement binds them (`order`: sqliteForm's). SQLite drivers bind
 * strings, numbers, null and byte arrays: booleans and undefined become these, in one pass over the
 * statement's placeholders (no call per parameter).
 */
function bound(order: readonly number[], params: readonly unknown[]): unknown[] {
  const values = new Array<unknown>(order.length);
  for (let i = 0; i < order.length; i++) {
    const value = params[order[i]!];
    values[i] = value === undefined ? null : typeof value === 'boolean' ? Number(value) : value;
  }
  return values;
}
