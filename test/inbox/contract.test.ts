/**
 * The database inbox's contract (`inboxContract` from `@svc/webhooks/testing`) on real PostgreSQL and on
 * a SQLite file, each with the app's transactions (`pgTransactions`, `sqliteTransactions`) for the
 * exactly-once check.
 */
import { createPostgresInbox, pgTransactions } from '@svc/webhooks/postgres';
import { createSqliteInbox, sqliteTransactions } from '@svc/webhooks/sqlite';
import { inboxContract } from '@svc/webhooks/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { openRawSqlite, type RawSqlite } from '../support/sqlite.js';
import { sqliteDatabase, uniqueTable } from './support.js';

describe.runIf(postgresAvailable())('inbox contract on PostgreSQL (pg, pgTransactions)', () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.connectionString, max: 6 });
    pool.on('error', () => {});
    await pool.query('CREATE TABLE effects (delivery_id TEXT NOT NULL)');
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.close();
  });
  const tables = new WeakMap<object, string>();
  for (const check of inboxContract<pg.PoolClient>({
    create: ({ clock }) => {
      const table = uniqueTable('contract');
      const inbox = createPostgresInbox({ client: pool, table, clock });
      tables.set(inbox, table);
      return inbox;
    },
    cleanup: (inbox) => pool.query(`DROP TABLE IF EXISTS ${tables.get(inbox)}`),
    effects: () => ({
      transactions: pgTransactions(pool),
      write: (tx, id) => tx.query('INSERT INTO effects (delivery_id) VALUES ($1)', [id]),
      count: async (id) =>
        Number(
          (await pool.query('SELECT count(*) AS n FROM effects WHERE delivery_id = $1', [id])).rows[0].n,
        ),
    }),
  })) {
    it(check.name, check.run);
  }
});

describe('inbox contract on a SQLite file (sqliteTransactions)', () => {
  const db = sqliteDatabase();
  let app: RawSqlite;
  beforeAll(async () => {
    await db.sql('CREATE TABLE effects (delivery_id TEXT NOT NULL)');
    app = openRawSqlite(db.path);
  });
  afterAll(async () => {
    app?.close();
    await db.close();
  });
  for (const check of inboxContract<RawSqlite>({
    create: ({ clock }) => createSqliteInbox({ path: db.path, table: uniqueTable('contract'), clock }),
    cleanup: (inbox) => inbox.close(),
    effects: () => ({
      transactions: sqliteTransactions(app),
      write: async (tx, id) => tx.prepare('INSERT INTO effects (delivery_id) VALUES (?)').run(id),
      count: async (id) =>
        Number(
          (
            (await db.sql(`SELECT count(*) AS n FROM effects WHERE delivery_id = '${id}'`))[0] as {
              n: number;
            }
          ).n,
        ),
    }),
  })) {
    it(check.name, check.run);
  }
});
