/**
 * The database inbox against its raw ceiling, in one run, on PostgreSQL and on a SQLite file:
 *
 * - Acknowledgement: `receiver.handle()` of a signed `delivered` in inbox mode (verify, parse, one
 *   INSERT of the row) against a raw single-row INSERT of the same values into a table of the same
 *   shape, on the same server or file with the same durability settings. p50 per round, median of
 *   rounds, contenders alternating.
 * - Worker throughput at 1 and 8 in flight: `createInboxWorker` (claim with lease and fencing, job
 *   MAC check, handler, completion) against a raw loop that claims one row (`UPDATE … WHERE id =
 *   (SELECT … FOR UPDATE SKIP LOCKED)` on PostgreSQL, the same without row locks on SQLite), parses
 *   its body, runs the handler and marks it handled. Same rows, reseeded each round.
 * - Memory under a backlog: BACKLOG rows seeded in SQL (`generate_series` with pgcrypto's HMAC on
 *   PostgreSQL, a recursive CTE with a MAC function on SQLite: every row a valid job), then a
 *   worker in a fresh process (bench/inbox-backlog-worker.mts) runs RUN of them while its RSS and
 *   heap (after a full collection) are sampled SAMPLES times. Default 100 000 rows;
 *   `INBOX_BENCH_BACKLOG=1000000` for the documented figure.
 *
 * Run: `npx tsx bench/inbox.mts [--write] [--backlog-only]` (`--write` updates docs/benchmarks.md;
 * `--backlog-only` runs the backlog part alone and only prints). Env: INBOX_BENCH_ROUNDS (3),
 * INBOX_BENCH_ACKS (200 per round), INBOX_BENCH_ROWS (500 per round), INBOX_BENCH_BACKLOG (100000),
 * INBOX_BENCH_RUN (2000), INBOX_BENCH_SAMPLES (10), INBOX_BENCH_BACKLOG_DBS (`postgresql,sqlite`),
 * INBOX_BENCH_BACKLOG_FILE (keep the SQLite backlog in this file and reuse it in the next run),
 * INBOX_BENCH_ONLY (`ack`: the acknowledgement only; `worker`: the throughput rounds only;
 * `memory`: the backlog runs only, like --backlog-only; printed, no section written).
 */
import { spawnSync } from 'node:child_process';
import { createHmac, hkdfSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { HANDOFF_MAC_INFO } from '../src/handoff/job/job-mac.js';
import { createMailReceiver } from '../src/index.js';
import { createInboxWorker, createPostgresInbox, type Inbox } from '../src/postgres.js';
import { createSqliteInbox } from '../src/sqlite.js';
import { createSignedRequest } from '../src/testing/index.js';
import { postgresBinDir, startPostgres } from '../test/support/servers.js';
import { openRawSqlite, type RawSqlite, rawSqliteDriver } from '../test/support/sqlite.js';
import { writeBenchSection } from './docs-section.mjs';
import { median } from './support.mjs';
import { commandVersion, packageVersion } from './versions.mjs';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('INBOX_BENCH_ROUNDS', 3);
const ACKS = env('INBOX_BENCH_ACKS', 200);
const ROWS = env('INBOX_BENCH_ROWS', 500);
const BACKLOG = env('INBOX_BENCH_BACKLOG', 100_000);
const RUN = Math.min(env('INBOX_BENCH_RUN', 2_000), BACKLOG);
const SAMPLES = env('INBOX_BENCH_SAMPLES', 10);
const BACKLOG_DBS = (process.env.INBOX_BENCH_BACKLOG_DBS ?? 'postgresql,sqlite').split(',');
const write = process.argv.includes('--write');
/** `INBOX_BENCH_ONLY=ack|worker|memory` (or `--backlog-only`): one part, printed (no section written). */
const ONLY = process.argv.includes('--backlog-only') ? 'memory' : process.env.INBOX_BENCH_ONLY;
const ackOnly = ONLY === 'ack';
const SECRET = 'whsec_bench_inbox_0123456789abcdefghij';
const logger = () => {};
const dir = mkdtempSync(join(tmpdir(), 'bench-inbox-'));
const postgresServer = await startPostgres();
const pool = new pg.Pool({ connectionString: postgresServer.connectionString, max: 10 });
pool.on('error', () => {});
await pool.query('CREATE EXTENSION IF NOT EXISTS pgcrypto');

/** One database: the inbox on it and its raw statements. */
interface Db {
  name: 'PostgreSQL' | 'SQLite';
  inbox(table: string): Inbox;
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

const postgres: Db = {
  name: 'PostgreSQL',
  inbox: (table) => createPostgresInbox({ client: pool, table }),
  sql: async (text, params = []) => (await pool.query(text, params)).rows,
};
const sqlitePath = join(dir, 'app.sqlite');
const raw = openRawSqlite(sqlitePath) as RawSqlite & {
  function(name: string, fn: (...args: unknown[]) => unknown): void;
};
raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000');
const sqlite: Db = {
  name: 'SQLite',
  inbox: (table) => createSqliteInbox({ path: sqlitePath, table }),
  sql: async (text, params = []) => raw.prepare(text).all(...(params as (string | number)[])) as never,
};

// --- rows: one real delivery as the template, every copy with its own ids and a valid job MAC -------
const template = await (async () => {
  const inbox = sqlite.inbox('template_inbox');
  await inbox.migrate();
  const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger });
  await receiver.handle(await createSignedRequest({ service: 'mail', event: 'delivered', secret: SECRET }));
  const [row] = await sqlite.sql('SELECT * FROM template_inbox');
  await inbox.close();
  return row!;
})();
const body = new Uint8Array(template.body as Uint8Array);
const jobKey = Buffer.from(hkdfSync('sha256', SECRET, new Uint8Array(0), HANDOFF_MAC_INFO, 32));
const idHeader = Object.keys(JSON.parse(String(template.headers))).find((h) => h.endsWith('-id'))!;
/** The MAC input's fields, split where a row's delivery id goes (ASCII ids: JSON leaves them as is). */
const fieldParts = (receivedAt: number) =>
  JSON.stringify([
    HANDOFF_MAC_INFO,
    2,
    'mail',
    '@@ID@@',
    'delivered',
    'mail:delivery:@@ID@@',
    receivedAt,
    0,
    Object.entries({ ...JSON.parse(String(template.headers)), [idHeader]: '@@ID@@' }).sort(([a], [b]) =>
      a < b ? -1 : 1,
    ),
  ]).split('@@ID@@');
const headersParts = JSON.stringify({ ...JSON.parse(String(template.headers)), [idHeader]: '@@ID@@' }).split(
  '@@ID@@',
);

/** The MAC of row `id` (SQLite's function; PostgreSQL computes the same in SQL). */
function macOf(deliveryId: string, receivedAt: number): string {
  const fields = Buffer.from(fieldParts(receivedAt).join(deliveryId));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(fields.length);
  return createHmac('sha256', jobKey).update(length).update(fields).update(body).digest('hex');
}
/** Gives a SQLite connection the `bench_mac` function the seeding statement calls. */
const withMac = (connection: typeof raw) =>
  connection.function('bench_mac', (id, at) => macOf(`d_${id}`, Number(at)));
withMac(raw);

/** Inserts `count` runnable rows (ids d_<from>…) in one statement; distinct ordering keys. */
async function seed(db: Db, table: string, from: number, count: number, connection = raw): Promise<void> {
  const at = Date.now();
  const [f0, f1, f2, f3] = fieldParts(at);
  const [h0, h1] = headersParts;
  const did = "'d_' || n";
  if (db.name === 'PostgreSQL') {
    const fields = `convert_to($3 || ${did} || $4 || ${did} || $5 || ${did} || $6, 'UTF8')`;
    await db.sql(
      `INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, secret_index, headers, mac, body)
       SELECT 'mail:delivery:' || ${did}, 'mail', 'delivered', ${did}, $1, 'mail:message:m_' || n, 'received', $1, $1, 0, $7 || ${did} || $8,
         encode(hmac(int4send(octet_length(${fields})) || ${fields} || $9, $10, 'sha256'), 'hex'), $9
       FROM generate_series($2::bigint, $2::bigint + $11 - 1) AS n`,
      [at, from, f0, f1, f2, f3, h0, h1, Buffer.from(body), jobKey, count],
    );
  } else {
    connection
      .prepare(
        `WITH RECURSIVE s(n) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT n + 1 FROM s WHERE n < ?)
         INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, secret_index, headers, mac, body)
         SELECT 'mail:delivery:' || ${did}, 'mail', 'delivered', ${did}, ?, 'mail:message:m_' || n, 'received', ?, ?, 0, ? || ${did} || ?, bench_mac(n, ?), ?
         FROM s`,
      )
      .run(from, from + count - 1, at, at, at, h0!, h1!, at, body as never);
  }
}

// --- acknowledgement: receiver.handle in inbox mode vs a raw single-row INSERT ----------------------
const requests = (count: number) =>
  Promise.all(
    Array.from({ length: count }, () =>
      createSignedRequest({ service: 'mail', event: 'delivered', secret: SECRET }),
    ),
  );

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e3;
}

/**
 * The raw INSERT: the inbox's columns and values, one row, as a hand-written receiver would.
 * `notify` (PostgreSQL): the same statement returning the id and waking the table's listeners in
 * the same round trip, as the inbox's INSERT does.
 */
function rawInsert(db: Db, table: string, notify = false): (i: number) => Promise<unknown> {
  const headers = String(template.headers);
  const columns =
    'dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, secret_index, headers, mac, body';
  if (db.name === 'PostgreSQL') {
    const insert = `INSERT INTO ${table} (${columns}) VALUES ($1, 'mail', 'delivered', $2, $3, $4, 'received', $3, $3, 0, $5, $6, $7) ON CONFLICT (dedup_key) DO NOTHING`;
    const text = notify
      ? `WITH ins AS (${insert} RETURNING id) SELECT id, pg_notify('${table}_wake', '') FROM ins`
      : insert;
    const bytes = Buffer.from(body);
    return (i) => pool.query(text, [`k${i}`, `d${i}`, Date.now(), `m${i}`, headers, template.mac, bytes]);
  }
  const statement = raw.prepare(
    `INSERT INTO ${table} (${columns}) VALUES (?, 'mail', 'delivered', ?, ?, ?, 'received', ?, ?, 0, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING`,
  );
  return async (i) => {
    const now = Date.now();
    statement.run(`k${i}`, `d${i}`, now, `m${i}`, now, now, headers, String(template.mac), body as never);
  };
}

interface AckResult {
  inbox: number;
  raw: number;
  /** PostgreSQL: the raw INSERT with RETURNING and pg_notify, as the inbox sends it. */
  notify?: number;
}

async function ackBench(db: Db): Promise<AckResult> {
  const inbox = db.inbox('ack_inbox');
  await inbox.migrate();
  const rawTable = db.inbox('ack_raw');
  await rawTable.migrate();
  const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger });
  const contenders: Array<[keyof AckResult, (i: number, request: Request) => Promise<unknown>]> = [
    ['inbox', (_i, request) => receiver.handle(request)],
    ['raw', rawInsert(db, 'ack_raw')],
  ];
  if (db.name === 'PostgreSQL') contenders.push(['notify', rawInsert(db, 'ack_raw', true)]);
  const p50s = new Map(contenders.map(([name]) => [name, [] as number[]]));
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const batch = await requests(ACKS);
    const times = new Map(contenders.map(([name]) => [name, [] as number[]]));
    // Interleaved one by one, the order flipped each round.
    for (const request of batch) {
      const order = round % 2 ? [...contenders].reverse() : contenders;
      for (const [name, run] of order) {
        const i = ++n;
        times.get(name)!.push(await timed(() => run(i, request)));
      }
    }
    for (const [name, list] of times) p50s.get(name)!.push(median(list));
  }
  await inbox.close();
  await rawTable.close();
  const result: AckResult = { inbox: median(p50s.get('inbox')!), raw: median(p50s.get('raw')!) };
  if (p50s.has('notify')) result.notify = median(p50s.get('notify')!);
  return result;
}

// --- worker throughput: createInboxWorker vs a raw claim-update loop ---------------------------------
async function fresh(db: Db, table: string, count: number): Promise<Inbox> {
  await db.sql(`DROP TABLE IF EXISTS ${table}`);
  const inbox = db.inbox(table);
  await inbox.migrate();
  await seed(db, table, 1, count);
  return inbox;
}

async function libraryRun(db: Db, concurrency: number): Promise<number> {
  const inbox = await fresh(db, 'tp_inbox', ROWS);
  const receiver = createMailReceiver({ secret: SECRET, logger });
  let handled = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => {
    done = resolve;
  });
  receiver.on('delivered', () => {
    if (++handled === ROWS) done();
  });
  const worker = createInboxWorker({ receiver, inbox, concurrency, pollMs: 20 });
  const started = process.hrtime.bigint();
  worker.start();
  await all;
  await worker.stop();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const [{ c }] = (await db.sql(`SELECT count(*) AS c FROM tp_inbox WHERE status = 'handled'`)) as [
    { c: unknown },
  ];
  if (Number(c) !== ROWS) throw new Error(`${db.name}: ${c} of ${ROWS} rows handled`);
  await inbox.close();
  return ROWS / seconds;
}

async function rawRun(db: Db, loops: number): Promise<number> {
  await (await fresh(db, 'tp_raw', ROWS)).close();
  const claim = `UPDATE tp_raw SET status = 'processing', attempts = attempts + 1 WHERE id = (SELECT id FROM tp_raw WHERE status = 'received' ORDER BY id LIMIT 1${db.name === 'PostgreSQL' ? ' FOR UPDATE SKIP LOCKED' : ''}) RETURNING *`;
  const complete = `UPDATE tp_raw SET status = 'handled', handled_at = $2 WHERE id = $1 AND status = 'processing'`;
  const handler = (_payload: unknown) => {};
  const claimSqlite = db.name === 'SQLite' ? raw.prepare(claim) : undefined;
  const completeSqlite = db.name === 'SQLite' ? raw.prepare(complete.replace(/\$\d/g, '?')) : undefined;
  let handled = 0;
  async function loop(): Promise<void> {
    for (;;) {
      const [row] = claimSqlite
        ? (claimSqlite.all() as Record<string, unknown>[])
        : (await pool.query(claim)).rows;
      if (!row) return;
      handler(JSON.parse(new TextDecoder().decode(row.body as Uint8Array)));
      if (completeSqlite) completeSqlite.run(row.id as number, Date.now());
      else await pool.query(complete, [row.id, Date.now()]);
      handled++;
      if (claimSqlite) await new Promise((r) => setImmediate(r)); // let the other loops take turns
    }
  }
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: loops }, loop));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (handled !== ROWS) throw new Error(`${db.name} raw: ${handled} of ${ROWS}`);
  return ROWS / seconds;
}

async function throughputBench(db: Db, concurrency: number): Promise<{ inbox: number; raw: number }> {
  const results = { inbox: [] as number[], raw: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const pair = [
      async () => results.inbox.push(await libraryRun(db, concurrency)),
      async () => results.raw.push(await rawRun(db, concurrency)),
    ];
    if (round % 2) pair.reverse();
    for (const run of pair) await run();
  }
  return { inbox: median(results.inbox), raw: median(results.raw) };
}

// --- memory under a backlog -------------------------------------------------------------------------
interface MemoryResult {
  seedSeconds: number | undefined;
  samples: Array<{
    handled: number;
    seconds: number;
    rssMb: number;
    heapMb: number;
    heapTotalMb: number;
    externalMb: number;
  }>;
  rate: number;
  /** Three `inbox.stats()` over the backlog, ms. */
  statsMs: number[];
}

/**
 * Seeds BACKLOG rows here, then runs the worker over them in a fresh process
 * (bench/inbox-backlog-worker.mts), so its memory is the worker's alone, not the seeding's. With
 * INBOX_BENCH_BACKLOG_FILE the SQLite backlog is kept in that file and reused by the next run when
 * it is still there (each run handles the next RUN rows of it).
 */
async function memoryBench(db: Db): Promise<MemoryResult> {
  const table = 'backlog_inbox';
  const keep = db.name === 'SQLite' ? process.env.INBOX_BENCH_BACKLOG_FILE : undefined;
  const path = keep ?? join(dir, 'backlog.sqlite');
  const connection = db.name === 'SQLite' ? (openRawSqlite(path) as typeof raw) : undefined;
  connection?.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  const target: Db = connection
    ? {
        name: 'SQLite',
        inbox: (t) => createSqliteInbox({ path, table: t }),
        sql: async (text, params = []) =>
          connection.prepare(text).all(...(params as (string | number)[])) as never,
      }
    : db;
  const [existing] = keep
    ? await target.sql(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = '${table}'`)
    : [];
  let seedSeconds: number | undefined;
  if (!existing) {
    await target.sql(`DROP TABLE IF EXISTS ${table}`);
    const inbox = target.inbox(table);
    await inbox.migrate();
    await inbox.close();
    if (connection) withMac(connection);
    const seedStarted = Date.now();
    for (let from = 1; from <= BACKLOG; from += 100_000)
      await seed(target, table, from, Math.min(100_000, BACKLOG - from + 1), connection);
    seedSeconds = (Date.now() - seedStarted) / 1000;
    if (db.name === 'PostgreSQL') await db.sql(`ANALYZE ${table}`);
  }
  const [{ waiting }] = (await target.sql(
    `SELECT count(*) AS waiting FROM ${table} WHERE status = 'received'`,
  )) as [{ waiting: unknown }];
  if (Number(waiting) < RUN) throw new Error(`${db.name}: ${waiting} rows waiting, fewer than ${RUN}`);
  connection?.close();
  const child = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(new URL('./inbox-backlog-worker.mts', import.meta.url)),
      db.name === 'SQLite' ? 'sqlite' : 'postgres',
      db.name === 'SQLite' ? path : postgresServer.connectionString,
      table,
      String(RUN),
      String(SAMPLES),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 2 ** 24 },
  );
  if (child.status !== 0) throw new Error(`${db.name}: the backlog worker exited with ${child.status}`);
  const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Omit<MemoryResult, 'seedSeconds'>;
  if (!keep) await target.sql(`DROP TABLE ${table}`);
  return { seedSeconds, ...result };
}

// --- the run ----------------------------------------------------------------------------------------
const rate = (n: number) => Math.round(n).toLocaleString('en-US');
const us = (n: number) => `${n.toFixed(0)} µs`;
const ackRows: string[] = [];
const tpRows: string[] = [];
const memRows: string[] = [];
for (const db of [postgres, sqlite]) {
  if (ONLY === 'memory') continue;
  if (ONLY === 'worker') {
    for (const concurrency of [1, 8])
      console.log(db.name, 'throughput', concurrency, await throughputBench(db, concurrency));
    continue;
  }
  const ack = await ackBench(db);
  console.log(db.name, 'ack', ack);
  ackRows.push(
    `| ${db.name} | ${us(ack.inbox)} | ${us(ack.raw)} | ${(ack.inbox / ack.raw).toFixed(2)}× | ${ack.inbox / ack.raw <= 1.2 ? 'met' : 'missed'} |`,
  );
  for (const concurrency of ackOnly ? [] : [1, 8]) {
    const tp = await throughputBench(db, concurrency);
    console.log(db.name, 'throughput', concurrency, tp);
    tpRows.push(
      `| ${db.name} | ${concurrency} | ${rate(tp.inbox)} | ${rate(tp.raw)} | ${(tp.inbox / tp.raw).toFixed(2)}× | ${tp.inbox / tp.raw >= 0.8 ? 'met' : 'missed'} |`,
    );
  }
}
for (const db of ONLY === 'ack' || ONLY === 'worker'
  ? []
  : [postgres, sqlite].filter((d) => BACKLOG_DBS.includes(d.name.toLowerCase()))) {
  const memory = await memoryBench(db);
  const first = memory.samples[1] ?? memory.samples[0]!;
  const last = memory.samples.at(-1)!;
  const max = (key: 'rssMb' | 'heapMb') => Math.max(...memory.samples.map((s) => s[key]));
  console.log(db.name, 'memory', memory);
  memRows.push(
    `| ${db.name} | ${BACKLOG.toLocaleString('en-US')} | ${memory.seedSeconds === undefined ? 'kept file' : `${memory.seedSeconds.toFixed(1)} s`} | ${RUN.toLocaleString('en-US')} at ${rate(memory.rate)}/s | ${first.rssMb.toFixed(0)} → ${last.rssMb.toFixed(0)} (max ${max('rssMb').toFixed(0)}) | ${first.heapMb.toFixed(0)} → ${last.heapMb.toFixed(0)} (max ${max('heapMb').toFixed(0)}) |`,
  );
}

const sqliteVersion = (raw.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
const section = `### Database inbox (\`bench/inbox.mts\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU shared with the database and other work; load average
${loadavg()[0]?.toFixed(1)} at the end), Node ${process.version}, PostgreSQL ${commandVersion(join(postgresBinDir() ?? '', 'postgres'), ['--version'], /(\d+\.\d+)/)} (the test setup's
server: \`fsync=off\`, \`synchronous_commit=off\`; both contenders on the same server and pool), pg
${packageVersion('pg')}, SQLite ${sqliteVersion} (${rawSqliteDriver()}) on a file in ${tmpdir()} (WAL, synchronous NORMAL for both);
${ROUNDS} rounds, contenders alternating, medians; run ${new Date().toISOString().slice(0, 10)}.

Acknowledgement: p50 of \`receiver.handle()\` of a signed \`delivered\` in inbox mode (verify, parse,
one INSERT) against a raw single-row INSERT of the same columns and values (${ACKS} of each per
round, interleaved one by one). Goal ≤ 1.2×.

| database | inbox-mode ack p50 | raw INSERT p50 | ÷ raw | goal |
|---|---:|---:|---:|---|
${ackRows.join('\n')}

Worker throughput (rows/s, ${ROWS} rows per round, each with its own ordering key): \`createInboxWorker\`
with \`concurrency\` 1 and 8 (claim with lease and fencing token, stale guard, job MAC check,
parse, handler, completion) against the raw loop, 1 or 8 at once: claim one row (\`UPDATE … WHERE
id = (SELECT … FOR UPDATE SKIP LOCKED)\`; on SQLite the same without row locks), parse its body,
run the handler, mark it handled. Goal ≥ 0.8×.

| database | in flight | inbox worker | raw loop | ÷ raw | goal |
|---|---:|---:|---:|---:|---|
${tpRows.join('\n')}

Memory under a backlog: rows seeded in SQL (\`generate_series\` with pgcrypto's \`hmac\` on PostgreSQL,
a recursive CTE with a MAC function on SQLite; every row a valid job), then one worker
(\`concurrency\` 8) runs part of them; RSS and heap of the process sampled every tenth of the run
(first sample after a tenth; MB).

| database | backlog | seeded in | worker ran | RSS MB | heap MB |
|---|---:|---:|---:|---:|---:|
${memRows.join('\n')}
`;
console.log(`\n${section}`);
if (write && ONLY === undefined) writeBenchSection('inbox', section);

raw.close();
await pool.end();
await postgresServer.close();
rmSync(dir, { recursive: true, force: true });
