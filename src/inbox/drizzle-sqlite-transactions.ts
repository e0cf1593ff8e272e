/** The transaction adapter of Drizzle on SQLite: `drizzleSqliteTransactions`. Structural: Drizzle is not imported. */
import { WebhookError } from '../shared/errors.js';
import { type InboxTransactions, type SqliteLike, sqliteTransactions } from './transactions.js';

/**
 * Transactions of Drizzle on a SQLite file: `BEGIN IMMEDIATE` … `COMMIT` on the connection Drizzle
 * wraps (as {@link sqliteTransactions}), with the Drizzle database itself as `context.tx`: its
 * statements run on that connection, inside the open transaction. Drizzle's own SQLite transactions
 * are synchronous (better-sqlite3) and cannot wait for an async handler. `connection` defaults to
 * the database's `$client` (better-sqlite3's `Database` under `drizzle-orm/better-sqlite3`); pass it
 * for a driver without one, such as Drizzle's `sqlite-proxy` over node:sqlite. Nothing else may use
 * that connection while the worker runs.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { drizzle } from 'drizzle-orm/better-sqlite3';
 * import { drizzleSqliteTransactions } from '@svc/webhooks/sqlite';
 *
 * const db = drizzle(new Database('app.sqlite', { timeout: 2_000 }));
 * const transactions = drizzleSqliteTransactions(db); // context.tx is the Drizzle database
 * ```
 */
export function drizzleSqliteTransactions<D extends object>(
  db: D,
  connection: SqliteLike | undefined = (db as { $client?: SqliteLike } | null)?.$client,
): InboxTransactions<D> {
  if (typeof db !== 'object' || db === null || typeof connection?.exec !== 'function')
    throw new WebhookError(
      'options_invalid',
      'drizzleSqliteTransactions: pass the Drizzle database and, when it has no $client (sqlite-proxy), the SQLite connection it runs on.',
    );
  const transactions = sqliteTransactions(connection);
  return {
    locksDatabase: true,
    transaction: (work) => transactions.transaction((_connection, execute) => work(db, execute)),
  };
}
