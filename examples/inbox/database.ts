/**
 * The app's database, on PostgreSQL (`DATABASE_URL`) or a SQLite file (`INBOX_FILE`, default
 * `app.sqlite`): a Drizzle database, the webhook inbox in the same database, the inbox worker's
 * transactions (Drizzle's: `drizzleTransactions`, `drizzleSqliteTransactions`), and the one
 * business write the handler makes through `context.tx`.
 */
import { DatabaseSync } from 'node:sqlite';
import {
  createPostgresInbox,
  drizzleTransactions,
  type Inbox,
  type InboxTransactions,
  postgresInboxDDL,
} from '@svc/webhooks/postgres';
import { createSqliteInbox, drizzleSqliteTransactions } from '@svc/webhooks/sqlite';
import type { SQL } from 'drizzle-orm';
import { drizzle as drizzlePg, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { drizzle as drizzleSqlite, type SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy';
import pg from 'pg';

export interface AppDatabase {
  name: string;
  inbox: Inbox;
  transactions: InboxTransactions<unknown>;
  /** Runs one statement in the handler's transaction (`context.tx`). */
  write(tx: unknown, statement: SQL): Promise<void>;
  close(): Promise<void>;
}

const BUSINESS =
  'CREATE TABLE IF NOT EXISTS won_deals (deal_id TEXT NOT NULL, delivery_id TEXT NOT NULL, value NUMERIC NOT NULL)';

type PgTx = Parameters<Parameters<NodePgDatabase['transaction']>[0]>[0];

async function onPostgres(url: string): Promise<AppDatabase> {
  const pool = new pg.Pool({ connectionString: url });
  pool.on('error', (error) => console.error('database pool:', error.message));
  await pool.query(BUSINESS);
  const transactions = drizzleTransactions(drizzlePg(pool)); // context.tx is the Drizzle transaction
  const inbox = createPostgresInbox({ client: pool });
  console.error(`PostgreSQL: ${postgresInboxDDL().split('\n')[0]} …`);
  return {
    name: 'PostgreSQL',
    inbox,
    transactions: transactions as InboxTransactions<unknown>,
    write: async (tx, statement) => {
      await (tx as PgTx).execute(statement);
    },
    close: () => pool.end(),
  };
}

async function onSqlite(path: string): Promise<AppDatabase> {
  // node:sqlite (Node 22.13+) under Drizzle's sqlite-proxy driver: each query runs on this connection.
  const connection = new DatabaseSync(path);
  connection.exec('PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000');
  connection.exec(BUSINESS);
  const db = drizzleSqlite(async (text, params, method) => {
    const statement = connection.prepare(text);
    if (method === 'run') {
      statement.run(...(params as never[]));
      return { rows: [] };
    }
    statement.setReturnArrays(true);
    const rows = statement.all(...(params as never[])) as unknown as unknown[][];
    return { rows: method === 'get' ? (rows[0] ?? []) : rows };
  });
  // The worker's transaction is BEGIN IMMEDIATE … COMMIT on the same connection, so the Drizzle
  // database handed to the handler as `context.tx` writes inside it.
  const transactions = drizzleSqliteTransactions(db, connection);
  const inbox = createSqliteInbox({ path });
  return {
    name: `SQLite (${path})`,
    inbox,
    transactions: transactions as InboxTransactions<unknown>,
    write: async (tx, statement) => {
      await (tx as SqliteRemoteDatabase).run(statement);
    },
    close: async () => {
      await inbox.close();
      connection.close();
    },
  };
}

export function openDatabase(env = process.env): Promise<AppDatabase> {
  return env.DATABASE_URL ? onPostgres(env.DATABASE_URL) : onSqlite(env.INBOX_FILE ?? 'app.sqlite');
}
