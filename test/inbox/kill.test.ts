/**
 * The proof of exactly-once effects: deliveries from the reference emitters to a receiving process in
 * inbox mode that is SIGKILLed at random points and restarted on the same port. Each handler inserts
 * one row into a business table with no unique constraint, through `context.tx`. After the services'
 * retries every delivery has exactly one business row and one `handled` inbox row, on PostgreSQL and
 * on a SQLite file, and on PostgreSQL with per-route secrets (a `secret` function of the route, which
 * the row stores and the worker verifies again under; kill-orm.test.ts: the same with Drizzle and Kysely). `INBOX_KILL_DELIVERIES`
 * (default 180) and `INBOX_KILLS` (default 5) scale it.
 */
import { afterAll, describe, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { killRun, TIMEOUT_MS } from './kill-harness.js';
import { type InboxDatabase, postgresDatabase, sqliteDatabase } from './support.js';

// The same run with one secret, and with a receiver whose secret is a function of the route.
for (const variant of [
  { name: '', label: 'PostgreSQL + pg', env: {} as Record<string, string> },
  { name: ', per-route secrets', label: 'PostgreSQL + pg, per-route secrets', env: { ROUTE_SECRETS: '1' } },
]) {
  describe.runIf(postgresAvailable())(`inbox kill test on PostgreSQL${variant.name}`, () => {
    let postgres: PostgresServer;
    let db: InboxDatabase;
    afterAll(async () => {
      await db?.close();
      await postgres?.close();
    });
    it(
      'SIGKILL at random points: every delivery has one business row and one handled inbox row',
      async () => {
        postgres = await startPostgres();
        db = postgresDatabase(postgres.connectionString);
        const env = { DB: 'postgres', DATABASE_URL: postgres.connectionString, ...variant.env };
        const counts = await killRun(db, env);
        console.info(`inbox kill test, ${variant.label}:`, JSON.stringify(counts));
      },
      TIMEOUT_MS,
    );
  });
}

describe('inbox kill test on SQLite', () => {
  const db = sqliteDatabase();
  afterAll(() => db.close());
  it(
    'SIGKILL at random points: every delivery has one business row and one handled inbox row',
    async () => {
      const counts = await killRun(db, { DB: 'sqlite', SQLITE_PATH: db.path });
      console.info('inbox kill test, SQLite file + better-sqlite3/node:sqlite:', JSON.stringify(counts));
    },
    TIMEOUT_MS,
  );
});
