/**
 * What one delivery costs the PostgreSQL inbox on the server, counted by the server itself (so the
 * figures do not move with the machine's load the way times do):
 *
 * - Planning per worker claim and completion, with and without named (prepared) statements:
 *   `pg_stat_statements` (loaded for this run, `track_planning = on`) counts the plans made and
 *   their time beside the executions; `pg_prepared_statements` of the inbox's own connection says
 *   how many were custom plans and how many the generic one. Plus one `EXPLAIN (ANALYZE)` of the
 *   claim as a plain statement (its planning and execution time).
 * - WAL per delivery: the WAL position's move (bytes) and `pg_stat_wal` (records, full-page images)
 *   across acknowledgements (`receiver.handle()` in inbox mode, 8 at once) and then the worker's runs
 *   of the same rows (8 in flight). The test server runs with `full_page_writes = off` on its command
 *   line (which ALTER SYSTEM cannot override): full-page images are not in these bytes.
 * - CPU per delivery: the Node process's user+system time (`process.cpuUsage`) and the server's
 *   (its processes' utime+stime from /proc) over the same phases: the app cores and database cores
 *   of a fleet sizing.
 *
 *   npx tsx bench/inbox-postgres-costs.mts [--claims 500] [--deliveries 2000] [--backlog 5000]
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { queueOf } from '../src/inbox/inbox.js';
import { createMailReceiver } from '../src/index.js';
import { createInboxWorker, createPostgresInbox } from '../src/postgres.js';
import { createSignedRequest } from '../src/testing/index.js';
import { startPostgres } from '../test/support/servers.js';
import { packageVersion } from './versions.mjs';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const CLAIMS = arg('--claims', 500);
const DELIVERIES = arg('--deliveries', 2_000);
const BACKLOG = arg('--backlog', 5_000);
const SECRET = 'whsec_bench_inbox_0123456789abcdefghij';
const logger = () => {};

const server = await startPostgres();
{
  const setup = new pg.Client({ connectionString: server.connectionString });
  await setup.connect();
  await setup.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await setup.end();
  await server.restart();
}
const admin = new pg.Client({ connectionString: server.connectionString });
await admin.connect();
await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
await admin.query('ALTER SYSTEM SET pg_stat_statements.track_planning = on');
await admin.query('SELECT pg_reload_conf()');
const version = (await admin.query('SHOW server_version')).rows[0].server_version as string;

/** Seeds `count` pending rows of distinct keys (not runnable by a receiver: planning only). */
async function seedPlain(table: string, count: number): Promise<void> {
  const now = Date.now();
  await admin.query(
    `INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body)
     SELECT 'k' || n, 'mail', 'delivered', 'd' || n, $1, 'm' || n, 'received', $1, $1, '{}', '\\x00'
     FROM generate_series(1, $2) AS n`,
    [now, count],
  );
  await admin.query(`ANALYZE ${table}`);
}

interface PlanFigures {
  statement: string;
  calls: number;
  plans: number;
  planMsPerCall: number;
  execMsPerCall: number;
  custom: number | undefined;
  generic: number | undefined;
}

/** Claims and completes CLAIMS rows one at a time on one connection; the server's counts for each. */
async function planning(prepared: boolean): Promise<PlanFigures[]> {
  const table = prepared ? 'plan_named' : 'plan_unnamed';
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  const inbox = createPostgresInbox({ client, table, preparedStatements: prepared });
  await inbox.migrate();
  await seedPlain(table, BACKLOG);
  const queue = queueOf(inbox);
  await admin.query('SELECT pg_stat_statements_reset()');
  for (let i = 0; i < CLAIMS; i++) {
    const [row] = await queue.claim(1, 30_000, 'mail');
    if (!row) throw new Error('nothing to claim');
    await queue.db.query(queue.statements.complete, [Number(row.id), Number(row.fence), Date.now()]);
  }
  const counted = await admin.query(
    `SELECT query, calls, plans, total_plan_time, total_exec_time FROM pg_stat_statements WHERE query LIKE $1`,
    [`%${table}%`],
  );
  const kept = await client.query(
    'SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements',
  );
  await client.end();
  // pg_stat_statements shows texts with their constants as parameters too.
  const which = (query: string) =>
    query.includes('WITH RECURSIVE')
      ? 'claim'
      : /^UPDATE .* handled_at = \$/.test(query)
        ? 'complete'
        : undefined;
  const out: PlanFigures[] = [];
  for (const r of counted.rows) {
    const statement = which(r.query);
    if (!statement) continue;
    const calls = Number(r.calls);
    const held = kept.rows.find((k) => which(k.statement) === statement);
    out.push({
      statement,
      calls,
      plans: Number(r.plans),
      planMsPerCall: Number(r.total_plan_time) / calls,
      execMsPerCall: Number(r.total_exec_time) / calls,
      custom: held ? Number(held.custom_plans) : undefined,
      generic: held ? Number(held.generic_plans) : undefined,
    });
  }
  return out.sort((a, b) => a.statement.localeCompare(b.statement));
}

/** EXPLAIN (ANALYZE) of the claim as a plain statement (rolled back): planning and execution, ms. */
async function explainClaim(): Promise<{ planningMs: number; executionMs: number }> {
  const table = 'plan_explain';
  const inbox = createPostgresInbox({ client: admin, table, preparedStatements: false });
  await inbox.migrate();
  await seedPlain(table, BACKLOG);
  const claim = queueOf(inbox).statements.claim;
  const literal = claim
    .replaceAll('$1', String(Date.now()))
    .replaceAll('$2', '30000')
    .replaceAll('$3', '1')
    .replaceAll('$4', `'mail'`);
  const runs: Array<{ planningMs: number; executionMs: number }> = [];
  for (let i = 0; i < 20; i++) {
    await admin.query('BEGIN');
    const plan = (await admin.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${literal}`)).rows[0]['QUERY PLAN'][0];
    await admin.query('ROLLBACK');
    runs.push({ planningMs: plan['Planning Time'], executionMs: plan['Execution Time'] });
  }
  const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { planningMs: mid(runs.map((r) => r.planningMs)), executionMs: mid(runs.map((r) => r.executionMs)) };
}

/** The server's processes' CPU time in ms (utime + stime of every backend and helper). */
async function serverCpuMs(): Promise<number> {
  const pids = (await admin.query('SELECT pid FROM pg_stat_activity')).rows.map((r) => Number(r.pid));
  const tick = 100; // USER_HZ on Linux
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / tick;
    } catch {
      // exited
    }
  }
  return total;
}

interface Phase {
  walRecords: number;
  walFpi: number;
  walBytes: number;
  appCpuMs: number;
  dbCpuMs: number;
}

/**
 * Runs `run` on a pool of its own, ended after it: the WAL bytes are the LSN's move (exact); records
 * and full-page images come from `pg_stat_wal`, which each backend adds to when it flushes its
 * statistics (at the latest when it exits: the pool is ended before reading them).
 */
async function phase(run: (pool: pg.Pool) => Promise<void>): Promise<Phase> {
  const pool = new pg.Pool({ connectionString: server.connectionString, max: 10 });
  pool.on('error', () => {});
  await Promise.all(Array.from({ length: 10 }, () => pool.query('SELECT 1'))); // connections open first
  const wal = async () =>
    (await admin.query('SELECT wal_records, wal_fpi, pg_current_wal_lsn() AS lsn FROM pg_stat_wal')).rows[0];
  await admin.query('SELECT pg_stat_force_next_flush()');
  const w0 = await wal();
  const db0 = await serverCpuMs();
  const cpu0 = process.cpuUsage();
  await run(pool);
  const cpu = process.cpuUsage(cpu0);
  const db1 = await serverCpuMs();
  const lsn1 = (await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn;
  await pool.end();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const w1 = await wal();
  const bytes = (await admin.query('SELECT pg_wal_lsn_diff($1, $2) AS d', [lsn1, w0.lsn])).rows[0].d;
  return {
    walRecords: Number(w1.wal_records) - Number(w0.wal_records),
    walFpi: Number(w1.wal_fpi) - Number(w0.wal_fpi),
    walBytes: Number(bytes),
    appCpuMs: (cpu.user + cpu.system) / 1000,
    dbCpuMs: db1 - db0,
  };
}

/** DELIVERIES acknowledgements, then the worker (8 in flight) runs them: each phase's costs. */
async function perDelivery(): Promise<{ ack: Phase; run: Phase }> {
  const table = 'wal_inbox';
  await createPostgresInbox({ client: admin, table }).migrate();
  const requests = await Promise.all(
    Array.from({ length: DELIVERIES }, (_, i) =>
      createSignedRequest({
        service: 'mail',
        event: 'delivered',
        secret: SECRET,
        payload: { message_id: `m_${table}_${i}` },
      }),
    ),
  );
  await admin.query('CHECKPOINT');
  const ack = await phase(async (pool) => {
    const receiver = createMailReceiver({
      secret: SECRET,
      handoff: createPostgresInbox({ client: pool, table }),
      logger,
    });
    // 8 at once, as a receiver under load takes them.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < requests.length) {
          const answer = await receiver.handle(requests[next++]!);
          if (answer.status !== 200) throw new Error(`ack: ${answer.status}`);
        }
      }),
    );
  });
  const [{ n }] = (await admin.query(`SELECT count(*) AS n FROM ${table} WHERE status = 'received'`)).rows;
  if (Number(n) !== DELIVERIES) throw new Error(`${n} of ${DELIVERIES} rows written`);
  await admin.query('CHECKPOINT');
  const run = await phase(async (pool) => {
    const runner = createMailReceiver({ secret: SECRET, logger });
    let handled = 0;
    let done!: () => void;
    const all = new Promise<void>((resolve) => {
      done = resolve;
    });
    runner.on('delivered', () => {
      if (++handled === DELIVERIES) done();
    });
    const inbox = createPostgresInbox({ client: pool, table });
    const worker = createInboxWorker({ receiver: runner, inbox, concurrency: 8, pollMs: 20 });
    worker.start();
    await all;
    await worker.stop();
  });
  return { ack, run };
}

const named = await planning(true);
const unnamed = await planning(false);
const explain = await explainClaim();
const perRow = await perDelivery();

const f = (n: number, d = 3) => n.toFixed(d);
console.log(
  `PostgreSQL ${version}, pg ${packageVersion('pg')}, Node ${process.version}; ${BACKLOG} pending rows, ${CLAIMS} claims`,
);
console.log(
  '\n| statement | named | calls | plans | planning ms/call | execution ms/call | custom / generic plans |',
);
console.log('|---|---|---:|---:|---:|---:|---|');
for (const [label, rows] of [
  ['no', unnamed],
  ['yes', named],
] as const)
  for (const r of rows)
    console.log(
      `| ${r.statement} | ${label} | ${r.calls} | ${r.plans} | ${f(r.planMsPerCall)} | ${f(r.execMsPerCall)} | ${r.custom === undefined ? '—' : `${r.custom} / ${r.generic}`} |`,
    );
console.log(
  `\nEXPLAIN (ANALYZE) of the claim as plain text (median of 20): planning ${f(explain.planningMs)} ms, execution ${f(explain.executionMs)} ms`,
);
console.log(
  '\n| phase (per delivery) | WAL records | full-page images | WAL bytes | app CPU ms | database CPU ms |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, p] of [
  ['acknowledgement', perRow.ack],
  ['worker run', perRow.run],
] as const)
  console.log(
    `| ${name} | ${f(p.walRecords / DELIVERIES, 1)} | ${f(p.walFpi / DELIVERIES, 2)} | ${Math.round(p.walBytes / DELIVERIES)} | ${f(p.appCpuMs / DELIVERIES)} | ${f(p.dbCpuMs / DELIVERIES)} |`,
  );
await admin.end();
await server.close();
