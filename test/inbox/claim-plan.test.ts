/**
 * The worker's claim reaches runnable rows through the runnable index on both databases, so its cost
 * follows the rows that may run, not the table: handled rows kept for 90 days and a backlog of a
 * million pending ones must not make every claim scan and sort the whole table. Checked on the query
 * plans (real SQLite, real PostgreSQL), not on timings: before the claim repeated the index's status
 * list, SQLite scanned the table and sorted it in a temporary B-tree, and PostgreSQL could not use the
 * index at all (a sequential scan and a sort: 4.6 s per claim over 100 000 pending rows).
 */

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxStatements, toSqlite } from '../../src/inbox/sql.js';
import { type PostgresServer, startPostgres } from '../support/servers.js';
import { openRawSqlite } from '../support/sqlite.js';

const TABLE = 'plan_inbox';
const statements = (dialect: 'postgres' | 'sqlite') => inboxStatements(TABLE, dialect);
const params = [Date.now(), 30_000, 8, 'mail'];

describe('the claim uses the runnable index, and the key indexes of pending and handled rows', () => {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.close());

  it('on SQLite: an index scan in order, no table scan, no sort', () => {
    const db = openRawSqlite(':memory:');
    const sql = statements('sqlite');
    db.exec(sql.ddl);
    const claim = toSqlite(sql.claim, params);
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${claim.text}`).all(...(claim.params as number[])) as {
        detail: string;
      }[]
    ).map((row) => row.detail);
    db.close();
    expect(plan).toContain(`SCAN r USING INDEX ${TABLE}_runnable_idx`);
    expect(plan.filter((line) => /^SCAN r$|TEMP B-TREE/.test(line))).toEqual([]);
    // A key's turn reads its pending rows only, and the stale guard its handled ones: a key's
    // history (handled rows kept for 90 days) never lengthens a claim.
    expect(plan).toContain(`SEARCH e USING INDEX ${TABLE}_key_pending_idx (ordering_key=?)`);
    expect(plan).toContain(
      `SEARCH n USING COVERING INDEX ${TABLE}_key_handled_idx (ordering_key=? AND event_at>?)`,
    );
  });

  it('on PostgreSQL: the runnable index, not a sequential scan of the table', async () => {
    const client = new pg.Client({ connectionString: server!.connectionString });
    await client.connect();
    try {
      const sql = statements('postgres');
      for (const statement of sql.ddl.split(';\n')) await client.query(statement);
      // A backlog of pending rows, each with its own key, and the planner's statistics about it.
      await client.query(
        `INSERT INTO ${TABLE} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body)
         SELECT 'k' || n, 'mail', 'delivered', 'd' || n, n, 'mail:message:m' || n, 'received', n, n, '{}', '\\x7b7d'
         FROM generate_series(1, 50000) AS n`,
      );
      await client.query(`ANALYZE ${TABLE}`);
      const { rows } = await client.query(`EXPLAIN (COSTS OFF) ${sql.claim}`, params);
      const plan = rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
      expect(plan).toMatch(new RegExp(`Index Scan using ${TABLE}_runnable_idx on ${TABLE} r\\b`));
      expect(plan).not.toMatch(/Seq Scan on plan_inbox r\b|Sort Key/);
      expect(plan).toMatch(new RegExp(`Index Scan using ${TABLE}_key_pending_idx on ${TABLE} e\\b`));
      expect(plan).toMatch(new RegExp(`Index Only Scan using ${TABLE}_key_handled_idx on ${TABLE} n\\b`));
    } finally {
      await client.end();
    }
  });
});
