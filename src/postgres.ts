/**
 * @module
 * `@svc/webhooks/postgres`: a `DedupStore` in a PostgreSQL table, for receivers running on several
 * processes or hosts. Works with any client that has `query(text, params)`: `pg` Pool or Client, PGlite.
 * The same entry has the database inbox (docs/inbox.md): one row per delivery in your own
 * database, handlers run in your transaction.
 */

export type { PostgresClientLike } from './dedup/postgres.js';
export * from './dedup/postgres.js';
export type { PostgresQueryable } from './inbox/db.js';
export { createDirectInbox, type DirectInbox, type DirectInboxOptions } from './inbox/direct.js';
export type { Inbox, InboxCommonOptions } from './inbox/inbox.js';
export type { OrderingInput } from './inbox/ordering.js';
export { drizzleTransactions, kyselyTransactions } from './inbox/orm-transactions.js';
export { createPostgresInbox, type PostgresInboxOptions } from './inbox/postgres-inbox.js';
export type { PostgresJsLike, PostgresJsTransactionLike } from './inbox/postgres-js-transactions.js';
export { postgresJsTransactions } from './inbox/postgres-js-transactions.js';
export { postgresInboxDDL } from './inbox/sql.js';
export type { ErrorEvents, PgPoolClientOf, PgPoolLike, PgQueryable } from './inbox/transactions.js';
export { type InboxTransactions, pgTransactions } from './inbox/transactions.js';
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
