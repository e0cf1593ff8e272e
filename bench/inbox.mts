/**
 * The database inbox against its raw ceiling, in one run, on PostgreSQL and on a SQLite file:
 *
 * - Acknowledgement: `receiver.handle()` of a signed `delivered` in inbox mode (verify, parse, one
 *   INSERT of the row) against a raw single-row INSERT of the same values into a table of the same
 *   shape, on the same server or file with the same durability settings. p50 per round, median of
 *   rounds, contenders alternating.
 * - Worker throughput at 1 and 8 in flight: `createInboxWorker` (claim with lease and fencing, the
 *   stored signature checked again, parse, handler, completion; on PostgreSQL also with
 *   `preparedStatements: false`, as before named statements) against a raw loop that claims one
 *   row through the inbox's runnable index (`UPDATE … WHERE id = (SELECT … ORDER BY run_at, id
 *   LIMIT 1 FOR UPDATE SKIP LOCKED)`, named statements, on PostgreSQL; the same without row locks
 *   on SQLite), parses its body, runs the handler and marks it handled. Same rows, reseeded each round.
 * - Memory under a backlog: BACKLOG rows seeded in SQL (`generate_series` on PostgreSQL, a recursive
 *   CTE on SQLite: every row a copy of one signed delivery under its own ids), then a
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
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
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
  /** `unnamed`: PostgreSQL without named (prepared) statements, as before they were the default. */
  inbox(table: string, unnamed?: boolean): Inbox;
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

const postgres: Db = {
  name: 'PostgreSQL',
  inbox: (table, unnamed) =>
    createPostgresInbox({ client: pool, table, ...(unnamed ? { preparedStatements: false } : {}) }),
  sql: async (text, params = []) => (await pool.query(text, params)).rows,
};
const sqlitePath = join(dir, 'app.sqlite');
const raw = openRawSqlite(sqlitePath) as RawSqlite;
raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000');
const sqlite: Db = {
  name: 'SQLite',
  inbox: (table) => createSqliteInbox({ path: sqlitePath, table }),
  sql: async (text, params = []) => raw.prepare(text).all(...(params as (string | number)[])) as never,
};

// --- rows: one real delivery as the template, every copy with its own ids (the signature covers the body) --
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
const idHeader = Object.keys(JSON.parse(String(template.headers))).find((h) => h.endsWith('-id'))!;
const headersParts = JSON.stringify({ ...JSON.parse(String(template.headers)), [idHeader]: '@@ID@@' }).split(
  '@@ID@@',
);

/** Inserts `count` runnable rows (ids d_<from>…) in one statement; distinct ordering keys. */
async function seed(db: Db, table: string, from: number, count: number, connection = raw): Promise<void> {
  const at = Date.now();
  const [h0, h1] = headersParts;
  const did = "'d_' || n";
  if (db.name === 'PostgreSQL') {
    await db.sql(
      `INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body)
       SELECT 'mail:delivery:' || ${did}, 'mail', 'delivered', ${did}, $1, 'mail:message:m_' || n, 'received', $1, $1, $3 || ${did} || $4, $5
       FROM generate_series($2::bigint, $2::bigint + $6 - 1) AS n`,
      [at, from, h0, h1, Buffer.from(body), count],
    );
  } else {
    connection
      .prepare(
        `WITH RECURSIVE s(n) AS (SELECT CAST(? AS INTEGER) UNION ALL SELECT n + 1 FROM s WHERE n < ?)
         INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body)
         SELECT 'mail:delivery:' || ${did}, 'mail', 'delivered', ${did}, ?, 'mail:message:m_' || n, 'received', ?, ?, ? || ${did} || ?, ?
         FROM s`,
      )
      .run(from, from + count - 1, at, at, at, h0!, h1!, body as never);
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
    'dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body';
  if (db.name === 'PostgreSQL') {
    const insert = `INSERT INTO ${table} (${columns}) VALUES ($1, 'mail', 'delivered', $2, $3, $4, 'received', $3, $3, $5, $6) ON CONFLICT (dedup_key) DO NOTHING`;
    const text = notify
      ? `WITH ins AS (${insert} RETURNING id) SELECT id, pg_notify('${table}_wake', '') FROM ins`
      : insert;
    const bytes = Buffer.from(body);
    return (i) => pool.query(text, [`k${i}`, `d${i}`, Date.now(), `m${i}`, headers, bytes]);
  }
  const statement = raw.prepare(
    `INSERT INTO ${table} (${columns}) VALUES (?, 'mail', 'delivered', ?, ?, ?, 'received', ?, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING`,
  );
  return async (i) => {
    const now = Date.now();
    statement.run(`k${i}`, `d${i}`, now, `m${i}`, now, now, headers, body as never);
  };
}

interface AckResult {
  inbox: number;
  raw: number;
  /** PostgreSQL: the raw INSERT with RETURNING and pg_notify, as the inbox sends it. */
  notify?: number;
  /** PostgreSQL: the inbox without named statements (`preparedStatements: false`). */
  unnamed?: number;
  /**
   * A hand-written receiver: reads the body, checks the HMAC (node:crypto, timingSafeEqual), parses
   * it, then the raw INSERT (with RETURNING and pg_notify on PostgreSQL, as the inbox's).
   */
  handwritten?: number;
}

const idHeaderName = 'x-svcmail-id';
const handwrittenReceiver =
  (insert: (i: number) => Promise<unknown>) => async (i: number, request: Request) => {
    const bytes = Buffer.from(await request.arrayBuffer());
    const header = request.headers.get('x-svcmail-sig') ?? '';
    const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(bytes).digest('hex')}`);
    if (header.length !== expected.length || !timingSafeEqual(Buffer.from(header), expected))
      throw new Error('handwritten: did not verify');
    JSON.parse(bytes.toString('utf8'));
    if (!request.headers.get(idHeaderName)) throw new Error('handwritten: no delivery id');
    return insert(i);
  };

async function ackBench(db: Db): Promise<AckResult> {
  const inbox = db.inbox('ack_inbox');
  await inbox.migrate();
  const rawTable = db.inbox('ack_raw');
  await rawTable.migrate();
  const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger });
  const pg = db.name === 'PostgreSQL';
  const contenders: Array<[keyof AckResult, (i: number, request: Request) => Promise<unknown>]> = [
    ['inbox', (_i, request) => receiver.handle(request)],
    ['raw', rawInsert(db, 'ack_raw')],
    ['handwritten', handwrittenReceiver(rawInsert(db, 'ack_raw', pg))],
  ];
  if (pg) {
    contenders.push(['notify', rawInsert(db, 'ack_raw', true)]);
    const unnamedInbox = db.inbox('ack_inbox_unnamed', true);
    await unnamedInbox.migrate();
    const unnamed = createMailReceiver({ secret: SECRET, handoff: unnamedInbox, logger });
    contenders.push(['unnamed', (_i, request) => unnamed.handle(request)]);
  }
  const p50s = new Map(contenders.map(([name]) => [name, [] as number[]]));
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // A request's body is read once: each contender gets its own copies.
    const batches = new Map(
      await Promise.all(contenders.map(async ([name]) => [name, await requests(ACKS)] as const)),
    );
    const times = new Map(contenders.map(([name]) => [name, [] as number[]]));
    // Interleaved one by one, the order flipped each round.
    for (let k = 0; k < ACKS; k++) {
      const order = round % 2 ? [...contenders].reverse() : contenders;
      for (const [name, run] of order) {
        const i = ++n;
        const request = batches.get(name)![k]!;
        times.get(name)!.push(await timed(() => run(i, request)));
      }
    }
    for (const [name, list] of times) p50s.get(name)!.push(median(list));
  }
  await inbox.close();
  await rawTable.close();
  const result: AckResult = { inbox: median(p50s.get('inbox')!), raw: median(p50s.get('raw')!) };
  for (const name of ['notify', 'unnamed', 'handwritten'] as const)
    if (p50s.has(name)) result[name] = median(p50s.get(name)!);
  return result;
}

// --- worker throughput: createInboxWorker vs a raw claim-update loop ---------------------------------
async function fresh(db: Db, table: string, count: number, unnamed = false): Promise<Inbox> {
  await db.sql(`DROP TABLE IF EXISTS ${table}`);
  const inbox = db.inbox(table, unnamed);
  await inbox.migrate();
  await seed(db, table, 1, count);
  return inbox;
}

async function libraryRun(db: Db, concurrency: number, unnamed = false): Promise<number> {
  // Its own table per variant: a named statement's text names its table, so two variants never share one.
  const table = unnamed ? 'tp_inbox_unnamed' : 'tp_inbox';
  const inbox = await fresh(db, table, ROWS, unnamed);
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
  const [{ c }] = (await db.sql(`SELECT count(*) AS c FROM ${table} WHERE status = 'handled'`)) as [
    { c: unknown },
  ];
  if (Number(c) !== ROWS) throw new Error(`${db.name}: ${c} of ${ROWS} rows handled`);
  await inbox.close();
  return ROWS / seconds;
}

/**
 * The raw claim of one row, through the inbox's own runnable index (`…_keyed_runnable_idx`: service,
 * run_at, id, over pending keyed rows; SQLite takes a partial index only for a query that repeats its
 * condition), and the completion; on PostgreSQL both named (prepared) statements, as a hand-written
 * loop on pg would send them at its best.
 */
function rawClaimStatements(table: string, pg: boolean): { claim: string; complete: string } {
  return {
    claim: `UPDATE ${table} SET status = 'processing', attempts = attempts + 1 WHERE id = (SELECT id FROM ${table} WHERE service = 'mail' AND ordering_key IS NOT NULL AND status IN ('received', 'failed', 'processing') AND status = 'received' AND run_at <= $1 ORDER BY run_at, id LIMIT 1${pg ? ' FOR UPDATE SKIP LOCKED' : ''}) RETURNING *`,
    complete: `UPDATE ${table} SET status = 'handled', handled_at = $2 WHERE id = $1 AND status = 'processing'`,
  };
}

async function rawRun(db: Db, loops: number): Promise<number> {
  await (await fresh(db, 'tp_raw', ROWS)).close();
  const { claim, complete } = rawClaimStatements('tp_raw', db.name === 'PostgreSQL');
  const handler = (_payload: unknown) => {};
  // SQLite's numbered parameters (`?1`, `?2`): `$2` comes before `$1` in the completion's text, so
  // plain `?` would bind the id to `handled_at` and match no row (until 2026-12-02 the raw loop's
  // completions changed nothing, and its claims slowed as the rows it left 'processing' piled up in
  // the runnable index).
  const numbered = (text: string) => text.replace(/\$(\d)/g, '?$1');
  const claimSqlite = db.name === 'SQLite' ? raw.prepare(numbered(claim)) : undefined;
  const completeSqlite = db.name === 'SQLite' ? raw.prepare(numbered(complete)) : undefined;
  if (claimSqlite) {
    const plan = raw.prepare(`EXPLAIN QUERY PLAN ${numbered(claim)}`).all(Date.now()) as {
      detail: string;
    }[];
    if (!plan.some((step) => step.detail.includes('tp_raw_keyed_runnable_idx')))
      throw new Error(`raw claim does not use the runnable index: ${JSON.stringify(plan)}`);
  }
  const decoder = new TextDecoder();
  let handled = 0;
  async function loop(): Promise<void> {
    for (;;) {
      const [row] = claimSqlite
        ? (claimSqlite.all(Date.now()) as Record<string, unknown>[])
        : (await pool.query({ name: 'bench_raw_claim', text: claim, values: [Date.now()] })).rows;
      if (!row) return;
      handler(JSON.parse(decoder.decode(row.body as Uint8Array)));
      if (completeSqlite) completeSqlite.run(row.id as number, Date.now());
      else await pool.query({ name: 'bench_raw_complete', text: complete, values: [row.id, Date.now()] });
      handled++;
      if (claimSqlite) await new Promise((r) => setImmediate(r)); // let the other loops take turns
    }
  }
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: loops }, loop));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (handled !== ROWS) throw new Error(`${db.name} raw: ${handled} of ${ROWS}`);
  // As for the inbox: every row completed, not only claimed.
  const [{ c }] = (await db.sql(`SELECT count(*) AS c FROM tp_raw WHERE status = 'handled'`)) as [
    { c: unknown },
  ];
  if (Number(c) !== ROWS) throw new Error(`${db.name} raw: ${c} of ${ROWS} rows handled`);
  return ROWS / seconds;
}

type Throughput = { inbox: number; raw: number; unnamed?: number };

async function throughputBench(db: Db, concurrency: number): Promise<Throughput> {
  const results: Record<string, number[]> = { inbox: [], raw: [], unnamed: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const runs = [
      async () => results.inbox!.push(await libraryRun(db, concurrency)),
      async () => results.raw!.push(await rawRun(db, concurrency)),
    ];
    // PostgreSQL: the inbox without named statements too, in the same rounds (before and after).
    if (db.name === 'PostgreSQL')
      runs.push(async () => results.unnamed!.push(await libraryRun(db, concurrency, true)));
    if (round % 2) runs.reverse();
    for (const run of runs) await run();
  }
  const out: Throughput = { inbox: median(results.inbox!), raw: median(results.raw!) };
  if (results.unnamed!.length) out.unnamed = median(results.unnamed!);
  return out;
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
      `| ${db.name} | ${concurrency} | ${rate(tp.inbox)} | ${rate(tp.raw)} | ${(tp.inbox / tp.raw).toFixed(2)}× | ${tp.inbox / tp.raw >= (concurrency === 1 ? 0.7 : 0.9) ? 'met' : 'missed'} |`,
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
with \`concurrency\` 1 and 8 (claim with lease and fencing token, stale guard, the stored signature
checked again, parse, handler, completion) against the raw loop, 1 or 8 at once: claim one row
through the inbox's runnable index (\`UPDATE … WHERE id = (SELECT … ORDER BY run_at, id LIMIT 1 FOR
UPDATE SKIP LOCKED)\`, named; on SQLite the same without row locks), parse its body, run the
handler, mark it handled. Goal ≥ 0.7× one at a time, ≥ 0.9× at 8.

| database | in flight | inbox worker | raw loop | ÷ raw | goal |
|---|---:|---:|---:|---:|---|
${tpRows.join('\n')}

Memory under a backlog: rows seeded in SQL (\`generate_series\` on PostgreSQL, a recursive CTE on
SQLite; every row a copy of one signed delivery under its own ids), then one worker
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
