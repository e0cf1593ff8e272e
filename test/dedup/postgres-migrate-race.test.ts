/**
 * Two processes that start together (a receiver and its worker: examples/handoff-pg-boss) both run
 * `migrate()`. PostgreSQL's `CREATE TABLE IF NOT EXISTS` is not safe against a concurrent twin: the
 * loser fails with 23505 on `pg_type_typname_nsp_index` (or 42P07). Each session here has its own
 * connection, as two processes would, on a real server.
 */
import { createPostgresInbox, createPostgresStore } from '@svc/webhooks/postgres';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type PostgresServer, startPostgres } from '../support/servers.js';

let server: PostgresServer;
const pools: pg.Pool[] = [];
const SESSIONS = 8;
const ROUNDS = 12;

beforeAll(async () => {
  server = await startPostgres();
  for (let i = 0; i < SESSIONS; i++) {
    const pool = new pg.Pool({ connectionString: server.connectionString, max: 1 });
    await pool.query('select 1');
    pools.push(pool);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await server?.close();
});

const migrators = [
  [
    'the dedup store',
    'race_dedup',
    (client: pg.Pool, table: string) => createPostgresStore({ client, table }),
  ],
  ['the inbox', 'race_inbox', (client: pg.Pool, table: string) => createPostgresInbox({ client, table })],
] as const;

it.each(migrators)(
  `%s: ${SESSIONS} sessions migrating one new table at once all succeed, ${ROUNDS} times`,
  async (_name, prefix, create) => {
    for (let round = 0; round < ROUNDS; round++) {
      const table = `${prefix}_${round}`;
      const results = await Promise.allSettled(pools.map((client) => create(client, table).migrate()));
      expect(
        results
          .filter((r) => r.status === 'rejected')
          .map((r) => String((r as PromiseRejectedResult).reason?.cause ?? r)),
      ).toEqual([]);
      const { rows } = await pools[0]!.query('select count(*)::int as n from pg_class where relname = $1', [
        table,
      ]);
      expect(rows[0].n).toBe(1);
    }
  },
  120_000,
);
