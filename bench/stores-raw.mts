/**
 * Each SQL and Redis store against its like-for-like raw statements, before and after, in one run:
 * a delivery's store work (claim a fresh key, complete it) through the store of this tree, through
 * the store as it was at `--before` (default a29c7e8, its src/ unpacked from git into a temporary
 * folder and imported from there), and as the raw statements a hand-written receiver would send on
 * the same client and the same table:
 *
 * - SQLite (node:sqlite or better-sqlite3, a file, WAL, synchronous NORMAL): a prepared `INSERT … ON
 *   CONFLICT (key) DO NOTHING` and a guarded `UPDATE`, on the very table and connection of the store
 *   after (its `expires_at` index included), and on a table of the same shape without the index in
 *   a file of its own (what the index costs).
 * - PostgreSQL (pg Pool): a named `INSERT … ON CONFLICT DO NOTHING RETURNING` and a named guarded
 *   `UPDATE … RETURNING`.
 * - Redis (ioredis): `SET key value NX PX` and `SET key value XX PX`.
 *
 * Deliveries per second one at a time and with `--concurrency` in flight; rounds interleave the
 * contenders and each cell is the median over the rounds, with the lowest and highest round beside
 * it. For Redis also the server's own CPU time per delivery (`INFO commandstats`, all commands, the
 * ones scripts run included): what bounds a busy Redis, and steadier than a rate on a shared machine.
 * Writes its section of docs/benchmarks.md unless `--no-write` (or `--only`).
 *
 *   npx tsx bench/stores-raw.mts [--n=2000] [--concurrency=16] [--rounds=5] [--before=7f0a4a4]
 *     [--only=sqlite,postgres,redis] [--no-write]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DedupStore } from '../src/dedup/types.js';
import { postgresBinDir, startPostgres, startRedis } from '../test/support/servers.js';
import { openRawSqlite, rawSqliteDriver } from '../test/support/sqlite.js';
import { writeBenchSection } from './docs-section.mjs';
import { commandVersion, packageVersion } from './versions.mjs';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const N = Number(option('n') ?? 2_000);
const CONCURRENCY = Number(option('concurrency') ?? 16);
const ROUNDS = Number(option('rounds') ?? 5);
const BEFORE = option('before') ?? '7f0a4a4';
const ONLY = option('only')?.split(',');
const write = !process.argv.includes('--no-write') && ONLY === undefined;
const root = new URL('..', import.meta.url).pathname;

const LEASE_MS = 30_000;
const TTL_MS = 86_400_000;
let sequence = 0;
const keyOf = () => `crm:delivery:${(++sequence).toString(16).padStart(8, '0')}-7f3a-4c1d-9e2b-5a6b7c8d9e0f`;

// --- the stores before: src/ of BEFORE, unpacked and imported ----------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-stores-raw-'));
const beforeDir = join(dir, 'before');
execFileSync('sh', [
  '-c',
  `mkdir -p ${beforeDir} && git -C ${root} archive ${BEFORE} src | tar -x -C ${beforeDir}`,
]);
type Factories = {
  sqlite: typeof import('../src/dedup/sqlite.js');
  postgres: typeof import('../src/dedup/postgres.js');
  redis: typeof import('../src/dedup/redis.js');
};
async function load(base: string): Promise<Factories> {
  const from = (name: string) => import(pathToFileURL(join(base, 'src/dedup', `${name}.ts`)).href);
  return { sqlite: await from('sqlite'), postgres: await from('postgres'), redis: await from('redis') };
}
const before = await load(beforeDir);
const after = await load(root);

// --- servers and clients --------------------------------------------------------------------------
const redisServer = await startRedis();
const postgresServer = await startPostgres();
const redis = new Redis(redisServer.port, '127.0.0.1');
const pool = new pg.Pool({ connectionString: postgresServer.connectionString, max: CONCURRENCY });
pool.on('error', () => {});

/** One contender: the store work of one delivery. */
interface Contender {
  group: 'SQLite' | 'PostgreSQL' | 'Redis';
  name: string;
  deliver(key: string): Promise<void>;
}

async function viaStore(store: DedupStore, key: string): Promise<void> {
  const claim = await store.claim(key, { leaseMs: LEASE_MS });
  if (claim.status !== 'claimed') throw new Error(`${key}: ${claim.status}`);
  if (!(await store.complete(key, claim.token, { ttlMs: TTL_MS }))) throw new Error(`${key}: not completed`);
}

const store = (group: Contender['group'], name: string, made: DedupStore): Contender => ({
  group,
  name,
  deliver: (key) => viaStore(made, key),
});

/** A SQLite file of its own, as the store opens one. */
function sqliteFile(name: string) {
  const database = openRawSqlite(join(dir, `${name}.sqlite`));
  database.exec('PRAGMA busy_timeout = 0; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  return database;
}

/**
 * The raw statements on `table` of `database`: the store's own table (made by the store, with its
 * index), or a table of the same shape without the index (made here).
 */
function rawSqlite(database: ReturnType<typeof sqliteFile>, table: string, index: boolean): Contender {
  if (!index)
    database.exec(`CREATE TABLE ${table} (key TEXT PRIMARY KEY NOT NULL, token TEXT NOT NULL,
    completed INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL) WITHOUT ROWID`);
  const insert = database.prepare(
    `INSERT INTO ${table} (key, token, completed, expires_at) VALUES (?, ?, 0, ?) ON CONFLICT (key) DO NOTHING`,
  );
  const complete = database.prepare(
    `UPDATE ${table} SET completed = 1, expires_at = ? WHERE key = ? AND token = ? AND completed = 0 AND expires_at > ?`,
  );
  let token = 0;
  return {
    group: 'SQLite',
    name: index
      ? "raw statements (the store's table and connection, expires_at index)"
      : 'raw statements (no index, a file of its own)',
    async deliver(key) {
      const now = Date.now();
      const mine = `t${++token}`;
      if (Number(insert.run(key, mine, now + LEASE_MS).changes) !== 1) throw new Error('taken');
      if (Number(complete.run(now + TTL_MS, key, mine, now).changes) !== 1) throw new Error('lost');
    },
  };
}

async function rawPostgres(): Promise<Contender> {
  await pool.query(`CREATE TABLE IF NOT EXISTS raw_dedup (key text PRIMARY KEY, token text NOT NULL,
    completed boolean NOT NULL DEFAULT false, expires_at bigint NOT NULL)`);
  await pool.query('CREATE INDEX IF NOT EXISTS raw_dedup_expires_at ON raw_dedup (expires_at)');
  let token = 0;
  return {
    group: 'PostgreSQL',
    name: 'raw named statements',
    async deliver(key) {
      const now = Date.now();
      const mine = `t${++token}`;
      const claimed = await pool.query({
        name: 'raw_claim',
        text: `INSERT INTO raw_dedup (key, token, completed, expires_at) VALUES ($1, $2, false, $3)
          ON CONFLICT (key) DO NOTHING RETURNING expires_at`,
        values: [key, mine, now + LEASE_MS],
      });
      if (claimed.rows.length !== 1) throw new Error('taken');
      const done = await pool.query({
        name: 'raw_complete',
        text: `UPDATE raw_dedup SET completed = true, expires_at = $1
          WHERE key = $2 AND token = $3 AND NOT completed AND expires_at > $4 RETURNING 1`,
        values: [now + TTL_MS, key, mine, now],
      });
      if (done.rows.length !== 1) throw new Error('lost');
    },
  };
}

function rawRedis(): Contender {
  let token = 0;
  return {
    group: 'Redis',
    name: 'raw SET NX PX, SET XX PX',
    async deliver(key) {
      const mine = `t${++token}`;
      if ((await redis.set(`raw:${key}`, `L:${mine}`, 'PX', LEASE_MS, 'NX')) !== 'OK')
        throw new Error('taken');
      if ((await redis.set(`raw:${key}`, `D:${mine}`, 'PX', TTL_MS, 'XX')) !== 'OK') throw new Error('lost');
    },
  };
}

const postgresStore = (factories: Factories, table: string, preparedStatements?: boolean) =>
  factories.postgres.createPostgresStore({ client: pool, table, preparedStatements });
const storeBefore = postgresStore(before, 'before_dedup');
const storeAfter = postgresStore(after, 'after_dedup');
// What the named statements are worth: the same store sending unnamed ones, planned on every call.
const storeUnnamed = postgresStore(after, 'unnamed_dedup', false);
await storeBefore.migrate();
await storeAfter.migrate();
await storeUnnamed.migrate();

const afterSqlite = sqliteFile('after');
const sqliteAfter = after.sqlite.createSqliteStore({ database: afterSqlite });
const contenders: Contender[] = [
  rawSqlite(afterSqlite, 'webhook_dedup', true),
  rawSqlite(sqliteFile('raw-noindex'), 'dedup', false),
  store('SQLite', 'store before', before.sqlite.createSqliteStore({ database: sqliteFile('before') })),
  store('SQLite', 'store after', sqliteAfter),
  await rawPostgres(),
  store('PostgreSQL', 'store before', storeBefore),
  store('PostgreSQL', 'store after', storeAfter),
  store('PostgreSQL', 'store after, unnamed statements (`preparedStatements: false`)', storeUnnamed),
  rawRedis(),
  store('Redis', 'store before', before.redis.createRedisStore({ client: redis, prefix: 'before:' })),
  store('Redis', 'store after', after.redis.createRedisStore({ client: redis, prefix: 'after:' })),
].filter((c) => ONLY === undefined || ONLY.includes(c.group.toLowerCase()));

// --- measure ----------------------------------------------------------------------------------------
const admin = new Redis(redisServer.port, '127.0.0.1');
/** The Redis server's CPU time in its commands so far, µs (every command, those scripts run included). */
async function serverMicros(): Promise<number> {
  let sum = 0;
  for (const [, usec] of (await admin.info('commandstats')).matchAll(/usec=(\d+)/g)) sum += Number(usec);
  return sum;
}

async function rates(
  contender: Contender,
): Promise<{ sequential: number; concurrent: number; micros: number; cpu: number }> {
  const redisGroup = contender.group === 'Redis';
  const m0 = redisGroup ? await serverMicros() : 0;
  const cpu0 = process.cpuUsage();
  let t0 = performance.now();
  for (let i = 0; i < N; i++) await contender.deliver(keyOf());
  const sequential = N / ((performance.now() - t0) / 1000);
  let next = 0;
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < N) await contender.deliver(keyOf());
    }),
  );
  const concurrent = N / ((performance.now() - t0) / 1000);
  const { user, system } = process.cpuUsage(cpu0);
  const cpu = (user + system) / (2 * N);
  // INFO itself costs a few µs: nothing beside N × 2 deliveries.
  const micros = redisGroup ? ((await serverMicros()) - m0) / (2 * N) : 0;
  return { sequential, concurrent, micros, cpu };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
type Rounds = { sequential: number[]; concurrent: number[]; micros: number[]; cpu: number[] };
const results = new Map<Contender, Rounds>();
for (const contender of contenders) for (let i = 0; i < 200; i++) await contender.deliver(keyOf()); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const contender of contenders) {
    const { sequential, concurrent, micros, cpu } = await rates(contender);
    const entry = results.get(contender) ?? { sequential: [], concurrent: [], micros: [], cpu: [] };
    entry.cpu.push(cpu);
    entry.sequential.push(sequential);
    entry.concurrent.push(concurrent);
    entry.micros.push(micros);
    results.set(contender, entry);
    console.log(
      `round ${round + 1}/${ROUNDS} ${contender.group} ${contender.name}: ${Math.round(sequential)}/s, ${Math.round(concurrent)}/s at ${CONCURRENCY}, this process ${cpu.toFixed(1)} µs${micros ? `, server ${micros.toFixed(2)} µs` : ''} of CPU per delivery`,
    );
  }
}

// --- report -----------------------------------------------------------------------------------------
const rate = (value: number) => Math.round(value).toLocaleString('en-US');
/** The median, and the lowest to the highest round. */
const spread = (values: number[]) =>
  `${rate(median(values))} (${rate(Math.min(...values))}–${rate(Math.max(...values))})`;
const rows: string[] = [];
const cpuRows: string[] = [];
const us = (values: number[]) =>
  `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;
for (const group of ['SQLite', 'PostgreSQL', 'Redis'] as const) {
  const members = contenders.filter((c) => c.group === group);
  const raw = members[0];
  if (!raw) continue;
  const rawSequential = median(results.get(raw)!.sequential);
  const rawConcurrent = median(results.get(raw)!.concurrent);
  const total = ({ cpu, micros }: Rounds) => median(cpu.map((c, i) => c + micros[i]!));
  const rawTotal = total(results.get(raw)!);
  for (const member of members) {
    const rounds = results.get(member)!;
    const { sequential, concurrent, micros, cpu } = rounds;
    rows.push(
      `| ${group} | ${member.name} | ${spread(sequential)} | ${(median(sequential) / rawSequential).toFixed(2)}× | ${spread(concurrent)} | ${(median(concurrent) / rawConcurrent).toFixed(2)}× |`,
    );
    cpuRows.push(
      `| ${group} | ${member.name} | ${us(cpu)} | ${group === 'Redis' ? us(micros) : '–'} | ${(rawTotal / total(rounds)).toFixed(2)}× |`,
    );
  }
}
const version = commandVersion;
const sqliteVersion = (
  openRawSqlite(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }
).v;
// On a machine busier than its cores, say what the timings can and cannot show.
const busy = (loadavg()[0] ?? 0) > cpus().length;
const BUSY_NOTE = `The load average was above the number of cores: single rounds swing widely (the spread in
parentheses), so read the CPU time per delivery over the rates.
`;
const section = `### Stores against their raw statements (\`bench/stores-raw.mts\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared with the servers and other work: load
average ${loadavg()[0]?.toFixed(1)} at the end of the run), Node ${process.version}, SQLite ${sqliteVersion} (${rawSqliteDriver()}) on a file in
${tmpdir()} (WAL, synchronous NORMAL), PostgreSQL ${version(join(postgresBinDir() ?? '', 'postgres'), ['--version'], /(\d+\.\d+)/)} (the test setup's server, \`fsync=off\`),
redis-server ${version('redis-server', ['--version'], /v=(\S+)/)}, pg ${packageVersion('pg')}, ioredis ${packageVersion('ioredis')}; ${N} deliveries (claim a fresh key,
complete it) per round, ${ROUNDS} rounds interleaved, medians with the lowest and highest round in
parentheses; "before" is the store at ${BEFORE}; run ${new Date().toISOString().slice(0, 10)}. Each store is compared with the first
row of its group: the same work as raw statements on the same client and table.

| backend | contender | deliveries/s, one at a time | ÷ raw | deliveries/s, ${CONCURRENCY} in flight | ÷ raw |
|---|---|---:|---:|---:|---:|
${rows.join('\n')}

CPU time per delivery (µs, over both passes of a round, medians with the lowest and highest round):
this process's (\`process.cpuUsage()\`: the store's code, the driver, and for SQLite the database
itself), and the Redis server's (\`INFO commandstats\`, the commands scripts run included). A
PostgreSQL backend's time is not counted. Last column: the raw statements' CPU time (process plus
Redis server) ÷ the contender's; on a machine this busy it is the steadier figure.

| backend | contender | this process | Redis server | raw ÷ contender |
|---|---|---:|---:|---:|
${cpuRows.join('\n')}

${busy ? BUSY_NOTE : ''}`;
console.log(`\n${section}`);
if (write) writeBenchSection('stores-raw', section);

redis.disconnect();
admin.disconnect();
await pool.end();
await redisServer.close();
await postgresServer.close();
rmSync(dir, { recursive: true, force: true });
