/**
 * @module
 * `@svc/webhooks/postgres`: a {@link DedupStore} in a PostgreSQL table, for receivers running on several
 * processes or hosts. Works with any client that has `query(text, params)`: `pg` Pool or Client, PGlite.
 */

import type { Clock } from '../shared/clock.js';
import { isPgClient, queryNamed, statementName } from '../shared/pg-named.js';
import { DEFAULT_POSTGRES_TABLE, postgresDedupDDL, quoteTable, statements } from './postgres-sql.js';
import { callTimeout, storeUnavailable, withTimeout } from './store-error.js';
import { badRowWarning, type ClaimAttempt, storeFromBackend } from './store-kit.js';
import type { AbandonOptions, ClaimOptions, DedupStore, StoreCallOptions } from './types.js';

export { postgresDedupDDL } from './postgres-sql.js';

/**
 * Any client with `query(text, params)` resolving to `{ rows }`: `pg` Pool/Client, PGlite, …
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite';
 * const client: PostgresClientLike = await PGlite.create();
 * ```
 *
 * @example
 * ```ts
 * import type { PostgresClientLike } from '@svc/webhooks/postgres';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PostgresClientLike): PostgresClientLike {
 *   return value;
 * }
 * ```
 */
export interface PostgresClientLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Options of {@link createPostgresStore}.
 *
 * @example
 * ```ts
 * const options: PostgresStoreOptions = { client: pool, table: 'app.webhook_dedup', createTable: true };
 * ```
 */
export interface PostgresStoreOptions {
  /** The client; the store never ends or closes it. */
  client: PostgresClientLike;
  /** Table name, `name` or `schema.name`. Default `'webhook_dedup'`. */
  table?: string;
  /**
   * Source of time in epoch ms. Default: the database server's clock, so hosts with skewed clocks
   * agree on when a lease ends. Inject one only for tests (a virtual clock) or a single-host setup.
   */
  clock?: Clock;
  /** Run {@link PostgresStore.migrate} before the first operation. Default `false` (use your migrations). */
  createTable?: boolean;
  /**
   * Longest wait for one query before it fails with `store_unavailable`, in ms; `0` for none. Default
   * 3000. It applies to calls made without a `callTimeoutMs` of their own, i.e. by your code directly
   * (`prune`, `migrate`, scripts): a receiver passes its `storeTimeoutMs` (default 2000) with every
   * call it makes, and that one decides.
   */
  callTimeoutMs?: number;
  /**
   * Called with the errors the client emits outside any query (a `pg` Pool's idle connection dropped
   * by a Postgres restart). Only used when the client had no `'error'` listener when the store was
   * created: the store then listens itself, because an `'error'` event with no listener crashes a
   * Node process. Default: ignore them (the next queries fail with `store_unavailable`, which the
   * receiver reports). Better: attach your own listener to the pool, as in the example.
   */
  onClientError?: (error: unknown) => void;
  /**
   * Send each statement as a named (prepared) statement, which PostgreSQL plans once per connection
   * instead of on every call. Default: on for a `pg` Pool or Client, off for other clients. Turn it
   * off behind a pooler that does not keep prepared statements (PgBouncer in transaction mode before
   * 1.21).
   */
  preparedStatements?: boolean;
}

/** The part of a Node EventEmitter (a `pg` Pool or Client) the store needs to guard `'error'`. */
interface ErrorEmitter {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  listenerCount(event: 'error'): number;
}

function isErrorEmitter(client: unknown): client is ErrorEmitter {
  const c = client as Partial<ErrorEmitter>;
  return typeof c.on === 'function' && typeof c.listenerCount === 'function';
}

/**
 * The Postgres store: a {@link DedupStore} with `extend`, `prune` and `migrate`.
 *
 * @example
 * ```ts
 * const store: PostgresStore = createPostgresStore({ client: pool });
 * const removed = await store.prune();
 * ```
 */
export interface PostgresStore extends DedupStore {
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
  /** Deletes expired claims and completed records; returns how many. Run it from a cron job. */
  prune(): Promise<number>;
  /** Creates the table and its index if missing ({@link postgresDedupDDL}). Idempotent. */
  migrate(): Promise<void>;
}

type Row = { token: string | null; completed: boolean | null; expires_at: unknown; now: unknown };

/**
 * A {@link DedupStore} in a PostgreSQL table. A claim is one `INSERT … ON CONFLICT (key) DO UPDATE …
 * WHERE <expired> RETURNING` statement (atomic under concurrency), followed by a read of the row only
 * when it did not win; complete, release and extend are single-row updates guarded by the fencing
 * token. With a `pg` client every statement is a named (prepared) one, planned once per connection. Errors and timeouts become
 * `WebhookError('store_unavailable')` (503): the receiver fails closed and the sender retries.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createPostgresStore } from '@svc/webhooks/postgres';
 *
 * const pool = new pg.Pool({
 *   connectionString: process.env.DATABASE_URL,
 *   query_timeout: 2_000, // a query never waits longer than this
 *   connectionTimeoutMillis: 2_000, // nor does opening a connection
 * });
 * // A Postgres restart drops idle connections: without a listener, that 'error' crashes the process.
 * pool.on('error', (error) => console.warn('webhook dedup pool:', error.message));
 * const dedup = createPostgresStore({ client: pool });
 * await dedup.migrate(); // or run postgresDedupDDL() in your migrations
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, dedup });
 * setInterval(() => void dedup.prune(), 3_600_000).unref();
 * ```
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const {
    client,
    table = DEFAULT_POSTGRES_TABLE,
    clock,
    createTable = false,
    callTimeoutMs = 3_000,
    onClientError = () => {},
  } = options;
  if (typeof client?.query !== 'function') {
    throw new TypeError('createPostgresStore: `client` must have a query(text, params) method (pg, PGlite).');
  }
  const { preparedStatements = isPgClient(client) } = options;
  // An unhandled 'error' event (a pg Pool's idle connection killed by a Postgres restart) would crash
  // the process: with no listener of the user's, the store listens itself.
  if (isErrorEmitter(client) && client.listenerCount('error') === 0) client.on('error', onClientError);
  quoteTable(table); // validate now, not at the first delivery
  const sql = statements(table);
  const names = new Map(Object.values(sql).map((text) => [text, statementName('svc_dedup_', text)]));
  const now = (): number | null => (clock ? clock.now() : null);
  const warnBadRow = badRowWarning('Postgres', JSON.stringify(table));
  let migrated: Promise<void> | undefined;

  function send(text: string, params: unknown[]): Promise<{ rows: unknown[] }> {
    if (!preparedStatements) return client.query(text, params);
    return queryNamed(client, names.get(text), text, params);
  }

  async function query<R>(text: string, params: unknown[], options?: StoreCallOptions): Promise<R[]> {
    const bound = callTimeout(options, callTimeoutMs);
    try {
      if (createTable) {
        migrated ??= migrate();
        await migrated;
      }
      const result = await withTimeout(send(text, params), bound, 'Postgres');
      return result.rows as R[];
    } catch (error) {
      if (createTable) migrated = undefined; // try again next time
      throw storeUnavailable('Postgres', error);
    }
  }

  async function migrate(): Promise<void> {
    try {
      // One statement per call: pg's extended protocol (used with params) runs one statement at a time.
      for (const statement of postgresDedupDDL(table).split(';\n')) {
        await withTimeout(client.query(statement, []), callTimeoutMs, 'Postgres');
      }
    } catch (error) {
      throw storeUnavailable('Postgres', error);
    }
  }

  async function guarded(text: string, params: unknown[], options?: StoreCallOptions): Promise<boolean> {
    return (await query(text, params, options)).length === 1;
  }

  const store = storeFromBackend({
    name: 'Postgres',
    async claim(key, token, leaseMs, options): Promise<ClaimAttempt> {
      const params = [key, token, leaseMs, now()];
      const [won] = await query<{ expires_at: unknown }>(sql.claim, params, options);
      if (won) return { status: 'claimed', token, leaseEndsAt: Number(won.expires_at) };
      const [row] = await query<Row>(sql.read, [key, now()], options);
      if (!row) return undefined; // released in between: ask again
      const expiresAt = row.expires_at === null ? Number.NaN : Number(row.expires_at);
      if (row.token === null || row.completed === null || !Number.isSafeInteger(expiresAt)) {
        warnBadRow();
        const [taken] = await query<{ expires_at: unknown }>(sql.takeover, params, options);
        return taken ? { status: 'claimed', token, leaseEndsAt: Number(taken.expires_at) } : undefined;
      }
      return {
        token: row.token,
        completed: row.completed,
        expiresAt,
        now: Number(row.now),
      };
    },
    complete: (key, token, ttlMs, options) => guarded(sql.complete, [key, token, ttlMs, now()], options),
    release: (key, token, options) => guarded(sql.release, [key, token, now()], options),
    async abandon(key, token, leaseMs, options) {
      const [row] = await query<{ ok: boolean }>(sql.abandon, [key, token, leaseMs, now()], options);
      return row?.ok === true;
    },
    extend: (key, token, leaseMs, options) => guarded(sql.extend, [key, token, leaseMs, now()], options),
  });

  return {
    ...store,
    async prune(): Promise<number> {
      const [row] = await query<{ n: number | string }>(sql.prune, [now()]);
      return Number(row?.n ?? 0);
    },
    migrate,
  };
}
