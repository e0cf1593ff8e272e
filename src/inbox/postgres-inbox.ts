/** The inbox in a PostgreSQL table: `createPostgresInbox`. */
import { systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { isPgClient, statementName } from '../shared/pg-named.js';
import { type PostgresQueryable, postgresDb } from './db.js';
import { createInbox, type Inbox, type InboxCommonOptions } from './inbox.js';
import { DEFAULT_INBOX_TABLE, inboxStatements, quoteTable } from './sql.js';

/**
 * Options of {@link createPostgresInbox}.
 *
 * @example
 * ```ts
 * const options: PostgresInboxOptions = { client: pool, table: 'app.webhook_inbox' };
 * ```
 */
export interface PostgresInboxOptions extends InboxCommonOptions {
  /** A `pg` Pool (or any client with `query(text, params)`); never ended by the inbox. */
  client: PostgresQueryable;
  /**
   * Send the inbox's fixed statements (the insert, the worker's claim, completion and row updates)
   * as named (prepared) statements, which PostgreSQL plans once per connection instead of on every
   * call. Default: on for a `pg` Pool or Client, off for other clients (PGlite). Turn it off behind a
   * pooler that does not keep prepared statements (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

/**
 * A database inbox in a PostgreSQL table (docs/inbox.md): give it to a receiver as `handoff` and a
 * delivery is acknowledged once its row is inserted (one durable write), then an inbox worker
 * ({@link createInboxWorker}) runs it, optionally in your transaction.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createInboxWorker, createPostgresInbox, pgTransactions } from '@svc/webhooks/postgres';
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * pool.on('error', (error) => console.warn('webhook inbox pool:', error.message));
 * const inbox = createPostgresInbox({ client: pool });
 * await inbox.migrate(); // or run postgresInboxDDL() in your migrations
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, handoff: inbox });
 * const worker = createInboxWorker({ receiver, inbox, transactions: pgTransactions(pool) });
 * receiver.on('deal.won', async (event, context) => {
 *   const tx = worker.tx(context); // the pg.PoolClient of the open transaction
 *   await tx.query('INSERT INTO won_deals (deal_id) VALUES ($1)', [event.data.deal_id]);
 * });
 * worker.start();
 * ```
 */
export function createPostgresInbox(options: PostgresInboxOptions): Inbox {
  const { client, table = DEFAULT_INBOX_TABLE, clock = systemClock, callTimeoutMs = 3_000 } = options;
  if (typeof client?.query !== 'function')
    throw new WebhookError(
      'options_invalid',
      'createPostgresInbox: `client` must have a query(text, params) method (pg).',
    );
  quoteTable(table, 'postgres');
  const { preparedStatements = isPgClient(client) } = options;
  // The fixed texts only: a list's or re-drive's text varies with its filter.
  const { ddl: _ddl, table: _quoted, stale: _stale, ...fixed } = inboxStatements(table, 'postgres');
  const names = preparedStatements
    ? new Map(Object.values(fixed).map((text) => [text, statementName('svc_inbox_', text)]))
    : undefined;
  return createInbox(postgresDb(client, callTimeoutMs, names), options, clock, table);
}
