/**
 * @module
 * `@svc/webhooks/d1`: a {@link DedupStore} in a Cloudflare D1 table, for receivers and queue consumers
 * running on Workers. Takes the Worker's D1 binding (`env.DB`); no Node API, nothing random or
 * asynchronous at creation, so it can be created in a Worker's global scope.
 */

import type { Clock } from '../shared/clock.js';
import { DEFAULT_D1_TABLE, d1DedupDDL, d1Statements, quoteD1Table } from './d1-sql.js';
import { callTimeout, storeUnavailable, withTimeout } from './store-error.js';
import { badRowWarning, type ClaimAttempt, storeFromBackend } from './store-kit.js';
import type { AbandonOptions, ClaimOptions, DedupStore, StoreCallOptions } from './types.js';

/**
 * The part of a D1 prepared statement the store uses.
 *
 * @example
 * ```ts
 * import type { D1StatementLike } from '@svc/webhooks/d1';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: D1StatementLike): D1StatementLike {
 *   return value;
 * }
 * ```
 */
export interface D1StatementLike {
  bind(...values: unknown[]): D1StatementLike;
  all(): Promise<{ results?: unknown[] }>;
  run(): Promise<{ meta?: { changes?: number } }>;
}

/**
 * The part of a D1 binding (`D1Database`) the store uses.
 *
 * @example
 * ```ts
 * import type { D1DatabaseLike } from '@svc/webhooks/d1';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: D1DatabaseLike): D1DatabaseLike {
 *   return value;
 * }
 * ```
 */
export interface D1DatabaseLike {
  prepare(query: string): D1StatementLike;
  batch(statements: D1StatementLike[]): Promise<{ results?: unknown[] }[]>;
}

/**
 * Options of {@link createD1Store}.
 *
 * @example
 * ```ts
 * const options: D1StoreOptions = { database: env.DB, table: 'webhook_dedup', createTable: true };
 * ```
 */
export interface D1StoreOptions {
  /** The Worker's D1 binding (`env.DB`, a `D1Database`). */
  database: D1DatabaseLike;
  /** Table name: letters, digits and underscores. Default `'webhook_dedup'`. */
  table?: string;
  /**
   * Source of time in epoch ms. Default: the database's clock, so Workers in different places agree
   * on when a lease ends (a Worker's own `Date.now()` also stands still while it waits on I/O).
   * Inject one only for tests (a virtual clock).
   */
  clock?: Clock;
  /**
   * Run {@link D1Store.migrate} before the first operation of each isolate. Default `false`: create
   * the table with a D1 migration (docs/dedup-d1.md has the SQL).
   */
  createTable?: boolean;
  /**
   * Longest wait for one call before it fails with `store_unavailable`, in ms; `0` for none. Default
   * 3000. It applies to calls made without a `callTimeoutMs` of their own (your code calling `prune()`
   * from a cron trigger, for one): a receiver passes its `storeTimeoutMs` (default 2000) with every
   * call it makes, and that one decides.
   */
  callTimeoutMs?: number;
}

/**
 * The D1 store: a {@link DedupStore} with `extend`, `prune` and `migrate`.
 *
 * @example
 * ```ts
 * const store: D1Store = createD1Store({ database: env.DB });
 * await store.prune();
 * ```
 */
export interface D1Store extends DedupStore {
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
  /** Deletes expired claims and completed records; returns how many. Run it from a cron trigger. */
  prune(): Promise<number>;
  /** Creates the table and its index if missing. Idempotent. */
  migrate(): Promise<void>;
}

type Row = { token: unknown; completed: unknown; expires_at: unknown; now: unknown };

/**
 * A {@link DedupStore} in a Cloudflare D1 (SQLite) table, for Workers. A claim is one batch, which D1
 * runs as one transaction on the database's primary: an `INSERT … ON CONFLICT (key) DO UPDATE …
 * WHERE <expired> RETURNING` (a single statement, atomic: of any number of concurrent claims of a key
 * exactly one writes) and a read of the row it left. complete, release and extend are single-row
 * statements guarded by the fencing token. Errors and timeouts become
 * `WebhookError('store_unavailable')` (503): the receiver fails closed and the sender retries.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createD1Store } from '@svc/webhooks/d1';
 * import { createFetchHandler } from '@svc/webhooks/fetch';
 *
 * interface Env { DB: D1Database; SVC_MAIL_WEBHOOK_SECRET: string } // D1Database: @cloudflare/workers-types
 *
 * let handler: ((request: Request) => Promise<Response>) | undefined;
 * export default {
 *   fetch(request: Request, env: Env): Promise<Response> {
 *     handler ??= createFetchHandler(
 *       createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET, dedup: createD1Store({ database: env.DB }) }),
 *     );
 *     return handler(request);
 *   },
 * };
 * ```
 */
export function createD1Store(options: D1StoreOptions): D1Store {
  const { database, table = DEFAULT_D1_TABLE, clock, createTable = false, callTimeoutMs = 3_000 } = options;
  if (typeof database?.prepare !== 'function' || typeof database.batch !== 'function') {
    throw new TypeError(
      'createD1Store: `database` must be a D1 binding (env.DB) with prepare() and batch().',
    );
  }
  quoteD1Table(table); // validate now, not at the first delivery
  const sql = d1Statements(table);
  const now = (): number | null => (clock ? clock.now() : null);
  let migrated: Promise<void> | undefined;

  // Each statement is prepared once and bound per call: a D1 prepared statement is immutable (bind()
  // returns a new one). Off a Worker, a binding proxy (miniflare, wrangler's getPlatformProxy) makes
  // prepare() and bind() each block the thread for a round trip to workerd, so preparing per call
  // held 200 concurrent claims for seconds. A D1-like binding whose bind() returns the statement
  // itself (mutable) is prepared per call again. Called inside `call`, which turns a throw into 503.
  const prepared = new Map<string, D1StatementLike>();
  let reuse = true;
  function bound(text: string, ...params: unknown[]): D1StatementLike {
    const cached = reuse ? prepared.get(text) : undefined;
    const statement = cached ?? database.prepare(text);
    const result = statement.bind(...params);
    if (result === statement) {
      reuse = false;
      prepared.clear();
    } else if (reuse && !cached) prepared.set(text, statement);
    return result;
  }

  async function call<T>(work: () => Promise<T>, options?: StoreCallOptions): Promise<T> {
    const bound = callTimeout(options, callTimeoutMs);
    try {
      const run = async () => {
        if (createTable) {
          migrated ??= migrate();
          await migrated;
        }
        return work();
      };
      return await withTimeout(run(), bound, 'D1');
    } catch (error) {
      if (createTable) migrated = undefined; // try again next time
      throw storeUnavailable('D1', error);
    }
  }

  async function migrate(): Promise<void> {
    try {
      await withTimeout(
        database.batch(d1DedupDDL(table).map((statement) => database.prepare(statement))),
        callTimeoutMs,
        'D1',
      );
    } catch (error) {
      throw storeUnavailable('D1', error);
    }
  }

  /** Runs a guarded write; `true` when it changed the row (its `RETURNING` gave one). */
  async function guarded(text: string, params: unknown[], options?: StoreCallOptions): Promise<boolean> {
    const { results = [] } = await call(() => bound(text, ...params).all(), options);
    return results.length === 1;
  }

  const warnBadRow = badRowWarning('D1', JSON.stringify(table));

  const store = storeFromBackend({
    name: 'D1',
    // The read follows the claim inside one transaction, so it sees the row the claim decided on;
    // only its "now" is a moment later, which can find a lease ended in between (the kit asks again).
    async claim(key, token, leaseMs, options): Promise<ClaimAttempt> {
      const [won, read] = await call(
        () => database.batch([bound(sql.claim, key, token, leaseMs, now()), bound(sql.read, key, now())]),
        options,
      );
      const claimed = won?.results?.[0] as { expires_at: number } | undefined;
      if (claimed) return { status: 'claimed', token, leaseEndsAt: Number(claimed.expires_at) };
      const row = read?.results?.[0] as Row | undefined;
      if (!row) return undefined;
      const { token: holder, completed, expires_at: expiresAt } = row;
      if (
        typeof holder === 'string' &&
        typeof expiresAt === 'number' &&
        Number.isSafeInteger(expiresAt) &&
        (completed === 0 || completed === 1)
      )
        return { token: holder, expiresAt, completed: completed === 1, now: Number(row.now) };
      warnBadRow();
      const { results = [] } = await call(
        () => bound(sql.takeover, key, token, leaseMs, now()).all(),
        options,
      );
      const taken = results[0] as { expires_at: number } | undefined;
      return taken ? { status: 'claimed', token, leaseEndsAt: Number(taken.expires_at) } : undefined;
    },
    complete: (key, token, ttlMs, options) => guarded(sql.complete, [key, token, ttlMs, now()], options),
    release: (key, token, options) => guarded(sql.release, [key, token, now()], options),
    async abandon(key, token, leaseMs, options) {
      const [marked, read] = await call(
        () => database.batch([bound(sql.abandon, key, token, leaseMs, now()), bound(sql.read, key, now())]),
        options,
      );
      if ((marked?.results?.length ?? 0) > 0) return true;
      // Left alone: done when completed, not yet while another token's lease holds the key.
      return (read?.results?.[0] as Row | undefined)?.completed === 1;
    },
    extend: (key, token, leaseMs, options) => guarded(sql.extend, [key, token, leaseMs, now()], options),
  });

  return {
    ...store,
    async prune(): Promise<number> {
      const { meta } = await call(() => bound(sql.prune, now()).run());
      return Number(meta?.changes ?? 0);
    },

    migrate,
  };
}
