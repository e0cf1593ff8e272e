/**
 * The worker's claim reads bounded index ranges on both databases, so its cost follows the rows it
 * claims, not the table: handled rows kept for 90 days, a backlog of a million pending ones, or one
 * key's backlog (one captured body replayed under fresh ids: 300,000 rows of ONE ordering key behind
 * its running head) must not make a claim scan them. Checked on the query plans (real SQLite, real
 * PostgreSQL) and, on PostgreSQL, on the rows and buffers the claim reads, not on timings. Before
 * (one scan of the runnable index checking each row's turn) a claim read every waiting row of the
 * blocked key before another key's: 117,845 buffers at 100,000 rows, 0.4 s; and SQLite read every
 * row of a key up to the event time to check its head's turn.
 */

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxStatements, toSqlite } from '../../src/inbox/sql.js';
import { type PostgresServer, startPostgres } from '../support/servers.js';
import { openRawSqlite, type RawSqlite } from '../support/sqlite.js';

const TABLE = 'plan_inbox';
const statements = (dialect: 'postgres' | 'sqlite') => inboxStatements(TABLE, dialect);
const NOW = 10_000_000;
const params = [NOW, 30_000, 8, 'mail'];
const COLUMNS =
  'dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body, lease_until';
/** One key's backlog: `n` rows of one event time (a body replayed) behind `head`, then 20 other keys. */
const BACKLOG_KEY = 'mail:message:replayed';
const OTHERS = 20;

/** The aliases the claim gives the table (CTEs and subqueries over their results have others). */
const TABLE_ALIASES = new Set([TABLE, 'r', 'w', 'e', 'p', 'x', 'h', 'n']);

describe('the claim reads bounded index ranges: never a key’s backlog, never the table', () => {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(() => server?.close());

  it('on SQLite: every read of the table is an index search, a key’s turn two ranges that end at the row', () => {
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
    // No scan of the table under any alias (the scans left are of CTEs and bounded subqueries).
    const scans = plan.flatMap((line) => /^SCAN (\S+)/.exec(line)?.[1] ?? []);
    expect(scans.filter((alias) => TABLE_ALIASES.has(alias))).toEqual([]);
    // The window and the unkeyed rows: one service's due rows, oldest first.
    expect(plan).toContain(`SEARCH w USING INDEX ${TABLE}_keyed_runnable_idx (service=? AND run_at<?)`);
    expect(plan).toContain(`SEARCH r USING INDEX ${TABLE}_unkeyed_runnable_idx (service=? AND run_at<?)`);
    // A key's turn: an earlier event, or the same event received earlier (both end at the row:
    // before, a row value `(event_at, id) < (…)` bounded only the key, and SQLite read every row of it
    // up to the event time), and a live run of the key.
    expect(plan).toContain(`SEARCH e USING INDEX ${TABLE}_key_pending_idx (ordering_key=? AND event_at<?)`);
    expect(plan).toContain(
      `SEARCH e USING INDEX ${TABLE}_key_pending_idx (ordering_key=? AND event_at=? AND id<?)`,
    );
    expect(plan).toContain(
      `SEARCH p USING COVERING INDEX ${TABLE}_key_running_idx (ordering_key=? AND lease_until>?)`,
    );
    // The heads: from key to key through the pending-key index, never along a key.
    expect(plan).toContain(`SEARCH x USING INDEX ${TABLE}_key_pending_idx (ordering_key>?)`);
    // The stale guard reads the key's handled rows past the event: a key's history never lengthens it.
    expect(plan).toContain(
      `SEARCH n USING COVERING INDEX ${TABLE}_key_handled_idx (ordering_key=? AND event_at>?)`,
    );
  });

  it('on SQLite: behind a backlog of one key, the claim takes the other keys’ rows and the key’s head only', () => {
    const db = openRawSqlite(':memory:');
    const sql = statements('sqlite');
    db.exec(sql.ddl);
    seedSqlite(db, 5_000);
    const claim = toSqlite(sql.claim, params);
    const run = () => {
      db.exec('BEGIN');
      const rows = db.prepare(claim.text).all(...(claim.params as number[])) as { dedup_key: string }[];
      db.exec('ROLLBACK');
      return rows.map((row) => row.dedup_key).sort();
    };
    // The head runs under a live lease: the 8 oldest rows of the other keys, none of the backlog.
    expect(run()).toEqual(['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o8']);
    // A row without a key, due before them, is taken with the 7 oldest: rows without a key never hold
    // back the keys behind a blocked window.
    db.exec(
      `INSERT INTO ${TABLE} (${COLUMNS}) VALUES ('u1', 'mail', 'delivered', 'u1', 3000, NULL, 'received', 5005, 5005, '{}', x'7b7d', NULL)`,
    );
    expect(run()).toEqual(['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'u1']);
    db.exec(`DELETE FROM ${TABLE} WHERE dedup_key = 'u1'`);
    // The head done: the key's next row (the first received of the same event time) is due in the
    // window; the claim takes it alone, and the next claim, the window blocked again, the other keys'.
    db.exec(`UPDATE ${TABLE} SET status = 'handled', handled_at = 1 WHERE dedup_key = 'head'`);
    expect(run()).toEqual(['k1']);
    db.exec(
      `UPDATE ${TABLE} SET status = 'processing', lease_until = ${NOW + 60_000} WHERE dedup_key = 'k1'`,
    );
    expect(run()).toEqual(['o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7', 'o8']);
    db.close();
  });

  // Both plans: the custom one of a statement sent with its values, and the generic one a named
  // (prepared) statement switches to after five executions (the inbox's on a pg client).
  it.each(['custom', 'generic'] as const)(
    'on PostgreSQL (%s plan): bounded index probes, and the same rows read with 100,000 or 300,000 rows of one key waiting',
    async (mode) => {
      const client = new pg.Client({ connectionString: server!.connectionString });
      await client.connect();
      try {
        const sql = statements('postgres');
        await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
        for (const statement of sql.ddl.split(';\n')) await client.query(statement);
        if (mode === 'generic') {
          await client.query('SET plan_cache_mode = force_generic_plan');
          await client.query(`PREPARE claim_plan AS ${sql.claim}`);
        }
        const figures: Record<number, { rows: number; buffers: number; plan: string }> = {};
        for (const size of [0, 100_000, 300_000]) {
          await client.query(`TRUNCATE ${TABLE}`);
          await seedPostgres(client, size);
          await client.query(`VACUUM ANALYZE ${TABLE}`);
          await client.query('BEGIN');
          const { rows } =
            mode === 'generic'
              ? await client.query(
                  `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE claim_plan(${params.map((p) => (typeof p === 'string' ? `'${p}'` : p)).join(', ')})`,
                )
              : await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) ${sql.claim}`, params);
          await client.query('ROLLBACK');
          const plan = rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
          figures[size] = { ...readOf(plan), plan };
        }
        for (const size of [100_000, 300_000]) {
          const { plan } = figures[size]!;
          expect(plan).not.toMatch(new RegExp(`Seq Scan on ${TABLE}\\b`));
          // A key's turn and live runs are index conditions (ranges that end at the row), not filters.
          expect(plan).toMatch(
            /Index Cond: \(\(ordering_key = r_?\d*\.ordering_key\) AND \(event_at < r_?\d*\.event_at\)\)/,
          );
          expect(plan).toMatch(/Index Cond: \(\(ordering_key = \w+\.ordering_key\) AND \(lease_until > /);
          // No node reads more than the window, the keys and the rows claimed.
          expect(largestNode(plan)).toBeLessThanOrEqual(2 * OTHERS + 2);
        }
        // The backlog's size changes nothing the claim reads, and a B-tree level at most in buffers.
        expect(figures[300_000]!.rows).toBe(figures[100_000]!.rows);
        expect(figures[300_000]!.buffers).toBeLessThan(figures[100_000]!.buffers * 1.2);
        console.log(
          `claim behind one key's backlog (PostgreSQL, ${mode} plan): rows read / buffers ${[
            0, 100_000, 300_000,
          ]
            .map((size) => `${size}: ${figures[size]!.rows} / ${figures[size]!.buffers}`)
            .join(', ')}`,
        );
      } finally {
        await client.end();
      }
    },
    120_000,
  );
});

function seedSqlite(db: RawSqlite, size: number): void {
  const insert = db.prepare(
    `INSERT INTO ${TABLE} (${COLUMNS}) VALUES (?, 'mail', 'delivered', ?, ?, ?, ?, ?, ?, '{}', x'7b7d', NULLIF(?, 0))`,
  );
  db.exec('BEGIN');
  insert.run('head', 'head', 1_000, BACKLOG_KEY, 'processing', 1, 1, NOW + 60_000);
  for (let i = 1; i <= size; i++)
    insert.run(`k${i}`, `k${i}`, 1_000, BACKLOG_KEY, 'received', 1 + i, 1 + i, 0);
  for (let i = 1; i <= OTHERS; i++)
    insert.run(`o${i}`, `o${i}`, 2_000, `mail:message:o${i}`, 'received', size + 10 + i, size + 10 + i, 0);
  db.exec('COMMIT');
}

async function seedPostgres(client: pg.Client, size: number): Promise<void> {
  const rows = (id: string, eventAt: string, key: string, status: string, at: string, lease: string) =>
    `INSERT INTO ${TABLE} (${COLUMNS}) SELECT ${id}, 'mail', 'delivered', ${id}, ${eventAt}, ${key}, '${status}', ${at}, ${at}, '{}', '\\x7b7d', ${lease}`;
  await client.query(rows("'head'", '1000', `'${BACKLOG_KEY}'`, 'processing', '1', String(NOW + 60_000)));
  await client.query(
    `${rows("'k' || n", '1000', `'${BACKLOG_KEY}'`, 'received', '1 + n', 'NULL')} FROM generate_series(1, ${size}) AS n`,
  );
  await client.query(
    `${rows("'o' || n", '2000', "'mail:message:o' || n", 'received', `${size + 10} + n`, 'NULL')} FROM generate_series(1, ${OTHERS}) AS n`,
  );
}

const SCAN_NODE =
  /(?:Index Scan|Index Only Scan|Seq Scan|Bitmap Heap Scan)[^\n]*\(actual rows=(\d+) loops=(\d+)\)/g;

/** Rows every scan node returned (loops included), and the statement's shared buffers. */
function readOf(plan: string): { rows: number; buffers: number } {
  let rows = 0;
  for (const m of plan.matchAll(SCAN_NODE)) rows += Number(m[1]) * Number(m[2]);
  return { rows, buffers: Number(/Buffers: shared hit=(\d+)/.exec(plan)?.[1]) };
}

/** The most rows one scan node returned over all its loops. */
function largestNode(plan: string): number {
  return Math.max(...[...plan.matchAll(SCAN_NODE)].map((m) => Number(m[1]) * Number(m[2])));
}
