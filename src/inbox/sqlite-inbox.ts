/** The inbox in a SQLite table: `createSqliteInbox`. */

import { sqliteDriver } from '../dedup/sqlite-driver.js';
import { systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { sqliteDb } from './db.js';
import { createInbox, type Inbox, type InboxCommonOptions } from './inbox.js';
import { DEFAULT_INBOX_TABLE, quoteTable } from './sql.js';
import { withWriteTurns, writeTurnsOf } from './write-turns.js';

/**
 * Options of {@link createSqliteInbox}.
 *
 * @example
 * ```ts
 * const options: SqliteInboxOptions = { path: 'app.sqlite', synchronous: 'full' };
 * ```
 */
export interface SqliteInboxOptions extends InboxCommonOptions {
  /**
   * The database file (your app's). The inbox opens its own connection to it (WAL mode), so a
   * delivery being acknowledged never joins a handler's open transaction.
   */
  path: string;
  /** When a write counts as done: `'normal'` (default) survives a process crash, `'full'` a power loss too. */
  synchronous?: 'normal' | 'full';
}

/**
 * A database inbox in a SQLite table (docs/inbox.md): give it to a receiver as `handoff`; an inbox
 * worker ({@link createInboxWorker}) runs the rows, polling.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createInboxWorker, createSqliteInbox, sqliteTransactions } from '@svc/webhooks/sqlite';
 *
 * const inbox = createSqliteInbox({ path: 'app.sqlite' });
 * await inbox.migrate();
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, handoff: inbox });
 * const db = new Database('app.sqlite', { timeout: 2_000 });
 * const worker = createInboxWorker({ receiver, inbox, transactions: sqliteTransactions(db) });
 * receiver.on('bounced', (event, context) => {
 *   const tx = worker.tx(context); // db, inside the open transaction
 *   tx.prepare('INSERT INTO bounces (message_id) VALUES (?)').run(event.payload.message_id);
 * });
 * worker.start();
 * ```
 */
export function createSqliteInbox(options: SqliteInboxOptions): Inbox {
  const {
    path,
    table = DEFAULT_INBOX_TABLE,
    clock = systemClock,
    callTimeoutMs = 3_000,
    synchronous = 'normal',
  } = options;
  if (typeof path !== 'string' || path.length === 0 || path === ':memory:')
    throw new WebhookError('options_invalid', 'createSqliteInbox: `path` must name a database file.');
  quoteTable(table, 'sqlite');
  // The file opens at the first call; a runtime without a driver is told now, as the store tells it.
  sqliteDriver('createSqliteInbox');
  // This process's writers of the file (every inbox on it, their workers' transactions) take turns.
  const file = writeTurnsOf(path);
  const db = withWriteTurns(sqliteDb(path, callTimeoutMs, synchronous), file, callTimeoutMs);
  return createInbox(db, options, clock, table, file.turns);
}
