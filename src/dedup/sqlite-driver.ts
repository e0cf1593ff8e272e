import { WebhookError } from '../shared/errors.js';
import { storeUnavailable } from './store-error.js';

/**
 * The part of a SQLite database handle the store uses, which better-sqlite3's `Database`,
 * node:sqlite's `DatabaseSync` and bun:sqlite's `Database` all have: synchronous `exec` and
 * `prepare`, statements with `get`, `all` and `run` taking positional parameters.
 *
 * @example
 * ```ts
 * import type { SqliteDatabaseLike } from '@svc/webhooks/sqlite';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: SqliteDatabaseLike): SqliteDatabaseLike {
 *   return value;
 * }
 * ```
 */
export interface SqliteDatabaseLike {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatementLike;
}

/**
 * A prepared statement of {@link SqliteDatabaseLike}.
 *
 * @example
 * ```ts
 * import type { SqliteStatementLike } from '@svc/webhooks/sqlite';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: SqliteStatementLike): SqliteStatementLike {
 *   return value;
 * }
 * ```
 */
export interface SqliteStatementLike {
  /** The first row, or `undefined` (better-sqlite3, node:sqlite) or `null` (bun:sqlite) when none. */
  get(...params: (string | number)[]): unknown;
  all(...params: (string | number)[]): unknown[];
  /**
   * Runs the statement to its end, commit included (its errors too: a full disk's SQLITE_FULL), and
   * tells how many rows it wrote. The store runs every writing statement this way.
   */
  run(...params: (string | number)[]): { changes: number | bigint };
}

/** A handle the store opened itself, which it also closes. */
interface OwnedDatabase extends SqliteDatabaseLike {
  close(): unknown;
}

type Constructor = new (path: string) => OwnedDatabase;

/** A builtin module of this runtime, looked up without an import a bundler would try to resolve. */
function builtin(id: string): Record<string, unknown> | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return (runtime?.getBuiltinModule?.(id) ?? undefined) as Record<string, unknown> | undefined;
  } catch {
    return undefined; // node:sqlite behind a flag (Node 22.5-22.12) throws or is missing
  }
}

/**
 * Where better-sqlite3 is looked for, in order: from this module, so a peer dependency resolves as
 * the package itself sees it (pnpm's strict layout, a process started from another directory or by a
 * runner whose script is not the app's); then from the application's main script and working
 * directory (this library bundled into an app, where this module's location says nothing). The CJS
 * build reads `import.meta.url` as the chunk's `__filename` (tsup.config.ts).
 */
function betterSqlite3Bases(): (string | undefined)[] {
  const runtime = (globalThis as { process?: { argv?: string[]; cwd?: () => string } }).process;
  const main = runtime?.argv?.[1];
  const cwd = runtime?.cwd?.();
  return [import.meta.url, main?.startsWith('/') ? main : undefined, cwd ? `${cwd}/` : undefined];
}

/** better-sqlite3, from the first of {@link betterSqlite3Bases} that has it installed and loadable. */
function betterSqlite3(): Constructor | undefined {
  const createRequire = builtin('node:module')?.createRequire as
    | ((from: string) => (id: string) => unknown)
    | undefined;
  if (!createRequire) return undefined;
  for (const from of betterSqlite3Bases()) {
    if (!from) continue;
    try {
      const loaded = createRequire(from)('better-sqlite3') as Constructor | { default: Constructor };
      return typeof loaded === 'function' ? loaded : loaded.default;
    } catch {
      // not installed where `from` can see it, or built for another Node version: the next place
    }
  }
  return undefined;
}

/**
 * The runtime's SQLite: bun:sqlite on Bun, node:sqlite where it is built in without a flag (Node
 * 22.13 and later, Deno), else the better-sqlite3 package.
 */
function driver(): { name: string; open: Constructor } | undefined {
  const isBun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
  const bun = isBun ? (builtin('bun:sqlite')?.Database as Constructor | undefined) : undefined;
  if (bun) return { name: 'bun:sqlite', open: bun };
  const node = builtin('node:sqlite')?.DatabaseSync as Constructor | undefined;
  if (node) return { name: 'node:sqlite', open: node };
  const better = betterSqlite3();
  return better ? { name: 'better-sqlite3', open: better } : undefined;
}

/** The functions that open a SQLite file, named in the errors of {@link openSqlite}. */
export type SqliteOpener = 'createSqliteStore' | 'createSqliteInbox';

/** What else each opener could be given when the runtime has no driver. */
const WITHOUT_DRIVER: Record<SqliteOpener, string> = {
  createSqliteStore: ', or pass an open database as `database`',
  createSqliteInbox: '',
};

/**
 * The runtime's SQLite driver, or `options_invalid` naming `opener` with the install hint: the check
 * an opener makes when it is created, before it opens anything.
 */
export function sqliteDriver(opener: SqliteOpener): { name: string; open: Constructor } {
  const found = driver();
  if (found) return found;
  throw new WebhookError(
    'options_invalid',
    `${opener}: this runtime has no SQLite driver. Install better-sqlite3 (npm install better-sqlite3), run on Node 22.13+ or Bun${WITHOUT_DRIVER[opener]}.`,
  );
}

/**
 * Opens `path` with the runtime's SQLite in WAL mode (readers never wait for the writer; several
 * processes share the file), with `synchronous` as given (NORMAL: a commit survives the process
 * crashing; FULL: also the machine losing power, one fsync per commit) and a short `busy_timeout`
 * (SQLite retries a held write lock itself for up to that long, blocking; the store retries longer
 * without blocking, sqlite.ts). Its errors name `opener`.
 */
export function openSqlite(
  path: string,
  busyTimeoutMs: number,
  synchronous: 'normal' | 'full',
  opener: SqliteOpener,
): OwnedDatabase {
  const found = sqliteDriver(opener);
  let db: OwnedDatabase | undefined;
  try {
    db = new found.open(path);
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    return db;
  } catch (cause) {
    try {
      db?.close();
    } catch {
      // the open failed: nothing more to release
    }
    throw new WebhookError(
      'store_unavailable',
      `${opener}: could not open the SQLite database ${JSON.stringify(path)} with ${found.name} (see cause).`,
      { cause },
    );
  }
}

/**
 * Whether `error` is SQLite's "database is locked" (SQLITE_BUSY and its extended codes): another
 * connection holds the write lock. better-sqlite3 and bun:sqlite name it in `code`, node:sqlite gives
 * the number in `errcode`, bun:sqlite also in `errno`.
 */
function isBusy(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; errno?: unknown } | null;
  if (typeof e !== 'object' || e === null) return false;
  if (typeof e.code === 'string' && e.code.startsWith('SQLITE_BUSY')) return true;
  const primary = (n: unknown) => typeof n === 'number' && (n & 0xff) === 5;
  return (e.code === 'ERR_SQLITE_ERROR' && primary(e.errcode)) || primary(e.errno);
}

const MAX_PAUSE_MS = 50;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `op` (synchronous statements); while it finds the file locked by another writer, runs it again
 * after a pause of 1, 2, 4 … up to 50 ms, during which the event loop is free, until `boundMs` (0: no
 * bound) has passed since the call began. Any other error, the bound, or `closed()` become
 * `store_unavailable`, naming the store as `what` (default `'dedup store'`).
 */
export async function whileLocked<T>(
  op: () => T,
  boundMs: number,
  closed: () => boolean,
  what?: string,
): Promise<T> {
  const started = performance.now();
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    if (closed()) throw storeUnavailable('SQLite', new Error('the store was closed'), what);
    try {
      return op();
    } catch (error) {
      if (!isBusy(error)) throw storeUnavailable('SQLite', error, what);
      if (boundMs > 0 && performance.now() - started + pause > boundMs)
        throw storeUnavailable('SQLite', error, what);
    }
    await sleep(pause);
  }
}

/**
 * {@link whileLocked} whose first attempt runs at once: `op`'s value when the file was free (no
 * promise, no await: a writer on the event loop's hot path), its error thrown as `store_unavailable`,
 * and only when another writer holds the lock the promise of `whileLocked`'s waits.
 */
export function whileLockedNow<T>(
  op: () => T,
  boundMs: number,
  closed: () => boolean,
  what?: string,
): T | Promise<T> {
  if (!closed()) {
    try {
      return op();
    } catch (error) {
      if (!isBusy(error)) throw storeUnavailable('SQLite', error, what);
    }
  }
  return whileLocked(op, boundMs, closed, what);
}
