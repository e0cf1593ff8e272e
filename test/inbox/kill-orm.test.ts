/**
 * The kill test of kill.test.ts with the handlers writing through an ORM's transaction on PostgreSQL,
 * through the library's adapters: `drizzleTransactions` (node-postgres) and `kyselyTransactions` (pg). Every delivery ends with
 * exactly one business row and one `handled` inbox row. `INBOX_KILL_ORM_DELIVERIES` (default 48) and
 * `INBOX_KILL_ORM_KILLS` (default 3) scale it.
 */
import { afterAll, describe, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { killRun } from './kill-harness.js';
import { type InboxDatabase, postgresDatabase } from './support.js';

const ORM_DELIVERIES = Number(process.env.INBOX_KILL_ORM_DELIVERIES ?? 48);
const ORM_KILLS = Number(process.env.INBOX_KILL_ORM_KILLS ?? 3);
const TIMEOUT_MS = Math.max(240_000, ORM_DELIVERIES * 500);

describe.runIf(postgresAvailable())('inbox kill test on PostgreSQL, handlers writing through an ORM', () => {
  let postgres: PostgresServer;
  let db: InboxDatabase;
  afterAll(async () => {
    await db?.close();
    await postgres?.close();
  });
  for (const driver of ['drizzle', 'kysely'] as const) {
    it(
      `${driver}: SIGKILL at random points, every delivery has one business row and one handled inbox row`,
      async () => {
        postgres ??= await startPostgres();
        db ??= postgresDatabase(postgres.connectionString);
        const counts = await killRun(
          db,
          { DB: 'postgres', DRIVER: driver, DATABASE_URL: postgres.connectionString },
          { DELIVERIES: ORM_DELIVERIES, KILLS: ORM_KILLS },
        );
        console.info(`inbox kill test, PostgreSQL + ${driver}:`, JSON.stringify(counts));
      },
      TIMEOUT_MS,
    );
  }
});
