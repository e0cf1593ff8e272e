/** Inboxes on a real PostgreSQL server and on a SQLite file, for the inbox tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPostgresInbox,
  type Inbox,
  type InboxTransactions,
  pgTransactions,
} from '@svc/webhooks/postgres';
import { createSqliteInbox, sqliteTransactions } from '@svc/webhooks/sqlite';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { openRawSqlite, type RawSqlite } from '../support/sqlite.js';

let counter = 0;
export const uniqueTable = (prefix = 'inbox') => `${prefix}_${process.pid}_${++counter}`;

/** One database under test: an inbox on it, the app's transactions, and raw SQL for assertions. */
export interface InboxDatabase {
  name: 'postgres' | 'sqlite';
  inbox(options?: { table?: string; clock?: { now(): number }; callTimeoutMs?: number }): Inbox;
  transactions(): InboxTransactions<unknown>;
  /** Runs SQL on a connection of the test's own. */
  sql(text: string): Promise<Record<string, unknown>[]>;
  /** The statement that inserts one business row from a handler's `tx`. */
  insertBusiness(tx: unknown, table: string, deliveryId: string): Promise<void>;
  close(): Promise<void>;
}

export function postgresDatabase(connectionString: string): InboxDatabase {
  const pool = new pg.Pool({ connectionString, max: 6 });
  pool.on('error', () => {});
  return {
    name: 'postgres',
    inbox: (options = {}) => createPostgresInbox({ client: pool, ...options }),
    transactions: () => pgTransactions(pool) as InboxTransactions<unknown>,
    sql: async (text) => (await pool.query(text)).rows,
    insertBusiness: async (tx, table, deliveryId) => {
      await (tx as pg.PoolClient).query(`INSERT INTO ${table} (delivery_id) VALUES ($1)`, [deliveryId]);
    },
    close: () => pool.end(),
  };
}

export function sqliteDatabase(): InboxDatabase & { path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-'));
  const path = join(dir, 'app.sqlite');
  const raw: RawSqlite = openRawSqlite(path);
  raw.exec('PRAGMA journal_mode = WAL');
  const app = openRawSqlite(path);
  return {
    name: 'sqlite',
    path,
    inbox: (options = {}) => createSqliteInbox({ path, ...options }),
    transactions: () => sqliteTransactions(app) as InboxTransactions<unknown>,
    sql: async (text) => raw.prepare(text).all() as Record<string, unknown>[],
    insertBusiness: async (tx, table, deliveryId) => {
      (tx as RawSqlite).prepare(`INSERT INTO ${table} (delivery_id) VALUES (?)`).all(deliveryId);
    },
    close: async () => {
      raw.close();
      app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A suite on one database: its name, how to open it (beforeAll) and to let go of it (afterAll). */
export type DatabaseSuite = (
  name: string,
  open: () => Promise<InboxDatabase>,
  close: () => Promise<void>,
) => void;

/** Runs `suite` on a real PostgreSQL server (where the machine has one) and on a SQLite file. */
export function forEachInboxDatabase(suite: DatabaseSuite): void {
  let postgres: PostgresServer | undefined;
  if (postgresAvailable())
    suite(
      'PostgreSQL',
      async () => {
        postgres = await startPostgres();
        return postgresDatabase(postgres.connectionString);
      },
      async () => {
        await postgres?.close();
      },
    );
  suite(
    'SQLite',
    async () => sqliteDatabase(),
    async () => {},
  );
}

/**
 * In a `describe`: opens the database before its tests and closes it (and what opening started)
 * after them; the getter returns it once opened.
 */
export function openedInboxDatabase(
  open: () => Promise<InboxDatabase>,
  close: () => Promise<void>,
): () => InboxDatabase {
  let db: InboxDatabase | undefined;
  beforeAll(async () => {
    db = await open();
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await close();
  });
  return () => db!;
}
