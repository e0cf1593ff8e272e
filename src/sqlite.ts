/**
 * @module
 * `@svc/webhooks/sqlite`: a durable `DedupStore` in a SQLite file, for a receiver on one host
 * (one process or several sharing the file). Opens the file with the runtime's own SQLite (bun:sqlite
 * on Bun, node:sqlite on Node 22.13+ and Deno, better-sqlite3 elsewhere), or uses a database you opened.
 * The same entry has the database inbox (docs/inbox.md): one row per delivery in your own
 * database, handlers run in your transaction.
 */

export * from './dedup/sqlite.js';
export type { SqliteDatabaseLike, SqliteStatementLike } from './dedup/sqlite-driver.js';
export { createDirectInbox, type DirectInbox, type DirectInboxOptions } from './inbox/direct.js';
export { drizzleSqliteTransactions } from './inbox/drizzle-sqlite-transactions.js';
export type { Inbox, InboxCommonOptions } from './inbox/inbox.js';
export type { OrderingInput } from './inbox/ordering.js';
export { sqliteInboxDDL } from './inbox/sql.js';
export { createSqliteInbox, type SqliteInboxOptions } from './inbox/sqlite-inbox.js';
export type { SqliteLike } from './inbox/transactions.js';
export { type InboxTransactions, sqliteTransactions } from './inbox/transactions.js';
export type {
  InboxFilter,
  InboxListOptions,
  InboxPage,
  InboxRow,
  InboxRowDetail,
  InboxStats,
  InboxStatus,
} from './inbox/types.js';
export {
  createInboxWorker,
  type InboxListener,
  type InboxWorker,
  type InboxWorkerOptions,
} from './inbox/worker.js';
