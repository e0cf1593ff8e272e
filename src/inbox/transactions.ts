/**
 * Transaction adapters: how an inbox worker opens the app's transaction, hands it to the handlers as
 * `context.tx`, and runs the row's move to `handled` in it. Structural: no driver is imported.
 */
import { WebhookError } from '../shared/errors.js';

/**
 * The app's transactions as an inbox worker uses them. `transaction(work)` begins one, calls `work`
 * with the driver's transaction object (`context.tx`) and `execute`, which runs a statement without
 * parameters in that transaction and resolves how many rows it returned; commits when `work`
 * resolves and rolls back when it throws. Write your own for another driver (docs/inbox.md).
 *
 * @example
 * ```ts
 * import pg from 'pg';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const transactions: InboxTransactions<pg.PoolClient> = pgTransactions(pool);
 * ```
 */
export interface InboxTransactions<Tx = unknown> {
  transaction<T>(work: (tx: Tx, execute: (sql: string) => Promise<number>) => Promise<T>): Promise<T>;
  /** True when the transaction holds the whole database's write lock while it runs (SQLite). */
  readonly locksDatabase?: boolean;
}

/**
 * A `pg` Client (or a Pool's checked-out client): `query(text)` resolving to `{ rows }`.
 *
 * @example
 * ```ts
 * import type { PgQueryable } from '@svc/webhooks/postgres';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgQueryable): PgQueryable {
 *   return value;
 * }
 * ```
 */
export interface PgQueryable {
  query(text: string): Promise<{ rows: unknown[] }>;
}

/**
 * A checked-out client's `'error'` event (a `pg` PoolClient is an EventEmitter).
 *
 * @example
 * ```ts
 * import type { ErrorEvents } from '@svc/webhooks/postgres';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: ErrorEvents): ErrorEvents {
 *   return value;
 * }
 * ```
 */
export interface ErrorEvents {
  on?(event: 'error', listener: (error: unknown) => void): unknown;
  removeListener?(event: 'error', listener: (error: unknown) => void): unknown;
}

/**
 * A `pg` Pool: checks out a client that is given back with `release`.
 *
 * @example
 * ```ts
 * import type { PgPoolLike, PgQueryable } from '@svc/webhooks/postgres';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgPoolLike<PgQueryable>): PgPoolLike<PgQueryable> {
 *   return value;
 * }
 * ```
 */
export interface PgPoolLike<C extends PgQueryable> {
  connect(): Promise<C & ErrorEvents & { release(destroy?: unknown): void }>;
  readonly totalCount: number;
}

/**
 * The client a pool checks out (what `pgTransactions(pool)` hands the handlers). Read from the
 * callback form of `connect` when the pool has one, as pg's `Pool` does: TypeScript reads an
 * overloaded method by its last signature, which for pg is the callback's, where the promise form
 * would read as `void`. Otherwise from `connect(): Promise<client>`.
 *
 * @example
 * ```ts
 * import type pg from 'pg';
 * import type { PgPoolClientOf } from '@svc/webhooks/postgres';
 *
 * // pg.PoolClient
 * export type Checkout = PgPoolClientOf<pg.Pool>;
 * ```
 */
export type PgPoolClientOf<P> = P extends {
  connect(callback: (error: never, client: infer C, ...rest: never[]) => void): unknown;
}
  ? unknown extends C
    ? P extends { connect(): Promise<infer D> }
      ? D
      : PgQueryable
    : Exclude<C, undefined>
  : P extends { connect(): Promise<infer D> }
    ? D
    : PgQueryable;

async function inPgTransaction<T>(
  client: PgQueryable,
  work: (execute: (sql: string) => Promise<number>) => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  let result: T;
  try {
    result = await work(async (sql) => (await client.query(sql)).rows.length);
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
  await client.query('COMMIT');
  return result;
}

/**
 * Transactions of `node-postgres`: a `pg.Pool` (each transaction on a client checked out for it; the
 * handlers get that `PoolClient`) or a connected `pg.Client` used by the worker alone (the handlers get
 * the client). An inbox on PostgreSQL.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { pgTransactions } from '@svc/webhooks/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const transactions = pgTransactions(pool); // context.tx is a pg.PoolClient
 * ```
 */
export function pgTransactions<P extends PgPoolLike<PgQueryable>>(
  pool: P,
): InboxTransactions<PgPoolClientOf<P>>;
export function pgTransactions<C extends PgQueryable>(client: C): InboxTransactions<C>;
export function pgTransactions<C extends PgQueryable>(db: C | PgPoolLike<C>): InboxTransactions<C> {
  if (typeof (db as Partial<PgQueryable>)?.query !== 'function')
    throw new WebhookError('options_invalid', 'pgTransactions: pass a pg Pool or a connected pg Client.');
  if (typeof (db as Partial<PgPoolLike<C>>).totalCount === 'number') {
    const pool = db as PgPoolLike<C>;
    return {
      async transaction(work) {
        const client = await pool.connect();
        // A checked-out client's connection lost (a database restart) emits 'error'; with no listener
        // that crashes the process. The query in flight fails too, and that failure is the one handled.
        const ignore = (): void => {};
        client.on?.('error', ignore);
        try {
          const result = await inPgTransaction(client, (execute) => work(client, execute));
          client.release();
          return result;
        } catch (error) {
          // A connection whose transaction state is unknown is not given back to the pool.
          client.release(error instanceof Error ? error : true);
          throw error;
        } finally {
          client.removeListener?.('error', ignore);
        }
      },
    };
  }
  const client = db as C;
  let turn: Promise<unknown> = Promise.resolve();
  return {
    // One transaction at a time on one connection.
    transaction(work) {
      const run = turn.then(() => inPgTransaction(client, (execute) => work(client, execute)));
      turn = run.catch(() => {});
      return run;
    },
  };
}

/**
 * A better-sqlite3 `Database` or a node:sqlite `DatabaseSync`.
 *
 * @example
 * ```ts
 * import type { SqliteLike } from '@svc/webhooks/sqlite';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: SqliteLike): SqliteLike {
 *   return value;
 * }
 * ```
 */
export interface SqliteLike {
  exec(sql: string): unknown;
  prepare(sql: string): { all(...params: never[]): unknown[] };
}

/**
 * Transactions of a SQLite database the app opened (better-sqlite3 `Database`, node:sqlite
 * `DatabaseSync`): `BEGIN IMMEDIATE` … `COMMIT` around each row, one at a time; the handlers get the
 * database itself as `context.tx`. Give the worker a connection of its own (not one other code uses
 * meanwhile: its statements would join the open transaction), with a `busy_timeout`.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { sqliteTransactions } from '@svc/webhooks/sqlite';
 *
 * const transactions = sqliteTransactions(new Database('app.sqlite', { timeout: 2_000 }));
 * ```
 */
export function sqliteTransactions<D extends SqliteLike>(db: D): InboxTransactions<D> {
  if (typeof db?.exec !== 'function' || typeof db.prepare !== 'function')
    throw new WebhookError(
      'options_invalid',
      'sqliteTransactions: pass an open better-sqlite3 or node:sqlite database.',
    );
  let turn: Promise<unknown> = Promise.resolve();
  async function once<T>(work: (tx: D, execute: (sql: string) => Promise<number>) => Promise<T>): Promise<T> {
    db.exec('BEGIN IMMEDIATE');
    let result: T;
    try {
      result = await work(db, async (sql) => db.prepare(sql).all().length);
    } catch (error) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // SQLite already rolled back (an I/O error or a full disk ends the transaction)
      }
      throw error;
    }
    try {
      db.exec('COMMIT');
    } catch (error) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // nothing left to roll back
      }
      throw error;
    }
    return result;
  }
  return {
    locksDatabase: true,
    transaction(work) {
      const run = turn.then(() => once(work));
      turn = run.catch(() => {});
      return run;
    },
  };
}
