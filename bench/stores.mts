import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createMemoryStore } from '../src/dedup/memory-store.js';
import { createPostgresStore } from '../src/dedup/postgres.js';
import { createRedisStore } from '../src/dedup/redis.js';
import { createSqliteStore } from '../src/dedup/sqlite.js';
import type { ClaimResult, DedupStore } from '../src/dedup/types.js';
import { postgresBinDir, startPostgres, startRedis } from '../test/support/servers.js';
import { openRawSqlite, rawSqliteDriver } from '../test/support/sqlite.js';
import { writeBenchSection } from './docs-section.mjs';
import { commandVersion, packageVersion } from './versions.mjs';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const N = arg('n', 2_000);
const CONCURRENCY = arg('concurrency', 16);
const ROUNDS = arg('rounds', 3);
const write = !process.argv.includes('--no-write');

const LEASE = { leaseMs: 30_000 };
const TTL = { ttlMs: 86_400_000 };
let sequence = 0;
const keyOf = () => `crm:delivery:${(++sequence).toString(16).padStart(8, '0')}-7f3a-4c1d-9e2b-5a6b7c8d9e0f`;

/** One delivery's store work: claim a fresh key, complete it. */
async function deliver(store: DedupStore, key = keyOf()): Promise<void> {
  const claim = await store.claim(key, LEASE);
  if (claim.status !== 'claimed') throw new Error(`${key}: ${claim.status}`);
  await store.complete(key, claim.token, TTL);
}

// --- the stores --------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'svc-bench-stores-'));
const redisServer = await startRedis();
const postgresServer = await startPostgres();
const redis = new Redis(redisServer.port, '127.0.0.1');
const pool = new pg.Pool({ connectionString: postgresServer.connectionString, max: CONCURRENCY });
pool.on('error', () => {});

interface Contender {
  name: string;
  store: DedupStore;
  /** Round trips (or statements) so far, for the counting pass. */
  count(): Promise<number>;
}

let pgQueries = 0;
const countingPool = {
  // Text and params, or a named statement's config (`{ name, text, values }`): passed on as they came.
  query: (text: string | pg.QueryConfig, params?: unknown[]) => {
    pgQueries++;
    return pool.query(text as string, params);
  },
};
// Named statements, as the store sends them to a pg Pool (it cannot tell the wrapper is one).
const postgres = createPostgresStore({
  client: countingPool,
  table: 'bench_dedup',
  preparedStatements: true,
});
await postgres.migrate();

// Redis round trips: the commands this client sends (INFO commandstats would also count the commands
// a script runs inside the server).
let redisSent = 0;
const countingRedis = new Proxy(redis, {
  get(target, name) {
    const value = Reflect.get(target, name, target);
    if (typeof value !== 'function') return value;
    const counted = name === 'set' || name === 'evalsha' || name === 'eval';
    return (...args: unknown[]) => {
      if (counted) redisSent++;
      return value.apply(target, args);
    };
  },
});

/** A SQLite store on its own file through a database that counts the statements it runs. */
function sqlite(synchronous: 'normal' | 'full'): Contender {
  const database = openRawSqlite(join(dir, `${synchronous}.sqlite`));
  database.exec('PRAGMA journal_mode = WAL');
  database.exec(`PRAGMA synchronous = ${synchronous.toUpperCase()}`);
  let statements = 0;
  const counting = {
    exec: (sql: string) => database.exec(sql),
    prepare(sql: string) {
      const statement = database.prepare(sql);
      return {
        get(...params: (string | number)[]) {
          statements++;
          return statement.get(...params);
        },
        all(...params: (string | number)[]) {
          statements++;
          return statement.all(...params);
        },
        run(...params: (string | number)[]) {
          statements++;
          return statement.run(...params);
        },
      };
    },
  };
  return {
    name: `SQLite, synchronous ${synchronous} (${rawSqliteDriver()})`,
    store: createSqliteStore({ database: counting }),
    count: async () => statements,
  };
}

const contenders: Contender[] = [
  { name: 'memory', store: createMemoryStore(), count: async () => 0 },
  sqlite('normal'),
  sqlite('full'),
  {
    name: 'Redis (ioredis)',
    store: createRedisStore({ client: countingRedis, prefix: 'bench:' }),
    count: async () => redisSent,
  },
  { name: 'PostgreSQL (pg Pool)', store: postgres, count: async () => pgQueries },
];

// --- round trips -------------------------------------------------------------------------------
const COUNTED = 200;
const trips = new Map<string, { claim: number; complete: number; duplicate: number }>();
for (const { name, store, count } of contenders) {
  // First use: scripts loaded (a duplicate's too), statements prepared.
  const first = keyOf();
  await deliver(store, first);
  await store.claim(first, LEASE);
  const keys = Array.from({ length: COUNTED }, keyOf);
  const claims: ClaimResult[] = [];
  const start = await count();
  for (const key of keys) claims.push(await store.claim(key, LEASE));
  const afterClaims = await count();
  for (const [i, key] of keys.entries()) {
    const claim = claims[i]!;
    if (claim.status === 'claimed') await store.complete(key, claim.token, TTL);
  }
  const afterCompletes = await count();
  for (const key of keys) await store.claim(key, LEASE);
  const afterDuplicates = await count();
  trips.set(name, {
    claim: (afterClaims - start) / COUNTED,
    complete: (afterCompletes - afterClaims) / COUNTED,
    duplicate: (afterDuplicates - afterCompletes) / COUNTED,
  });
}

// --- latency and throughput ----------------------------------------------------------------------
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(store: DedupStore) {
  const claim: number[] = [];
  const complete: number[] = [];
  const duplicate: number[] = [];
  const keys: string[] = [];
  for (let i = 0; i < N; i++) {
    const key = keyOf();
    const t0 = performance.now();
    const result = await store.claim(key, LEASE);
    const t1 = performance.now();
    if (result.status !== 'claimed') throw new Error('not claimed');
    await store.complete(key, result.token, TTL);
    const t2 = performance.now();
    claim.push(t1 - t0);
    complete.push(t2 - t1);
    keys.push(key);
  }
  for (const key of keys.slice(0, Math.min(N, 500))) {
    const t0 = performance.now();
    await store.claim(key, LEASE);
    duplicate.push(performance.now() - t0);
  }
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < N) await deliver(store);
    }),
  );
  const concurrent = N / ((performance.now() - t0) / 1000);
  const sum = claim.reduce((a, b) => a + b, 0) + complete.reduce((a, b) => a + b, 0);
  for (const list of [claim, complete, duplicate]) list.sort((a, b) => a - b);
  return {
    claimP50: quantile(claim, 0.5),
    claimP99: quantile(claim, 0.99),
    completeP50: quantile(complete, 0.5),
    completeP99: quantile(complete, 0.99),
    duplicateP50: quantile(duplicate, 0.5),
    sequential: N / (sum / 1000),
    concurrent,
  };
}

type Row = Awaited<ReturnType<typeof measure>>;
const runs = new Map<string, Row[]>();
for (const { store } of contenders) for (let i = 0; i < 200; i++) await deliver(store); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const { name, store } of contenders) {
    const row = await measure(store);
    runs.set(name, [...(runs.get(name) ?? []), row]);
    console.log(
      `round ${round + 1}/${ROUNDS} ${name}: ${JSON.stringify(row, (_k, v) => (typeof v === 'number' ? Number(v.toFixed(3)) : v))}`,
    );
  }
}

// --- report ------------------------------------------------------------------------------------
const ms = (value: number) =>
  value < 0.1 ? value.toFixed(3) : value < 10 ? value.toFixed(2) : value.toFixed(1);
const rate = (value: number) => Math.round(value).toLocaleString('en-US');
const cell = (name: string, pick: (row: Row) => number, format: (n: number) => string) =>
  format(median(runs.get(name)!.map(pick)));
const tripRows = contenders
  .map(({ name }) => {
    const t = trips.get(name)!;
    return `| ${name} | ${t.claim} | ${t.complete} | ${t.duplicate} |`;
  })
  .join('\n');
const timeRows = contenders
  .map(
    ({ name }) =>
      `| ${name} | ${cell(name, (r) => r.claimP50, ms)} | ${cell(name, (r) => r.claimP99, ms)} | ${cell(name, (r) => r.completeP50, ms)} | ${cell(name, (r) => r.completeP99, ms)} | ${cell(name, (r) => r.duplicateP50, ms)} | ${cell(name, (r) => r.sequential, rate)} | ${cell(name, (r) => r.concurrent, rate)} |`,
  )
  .join('\n');
const version = commandVersion;
const sqliteVersion = (
  openRawSqlite(':memory:').prepare('SELECT sqlite_version() AS v').get() as { v: string }
).v;
const section = `### Dedup stores side by side (\`bench/stores.mts\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared with the servers; load average ${loadavg()[0]?.toFixed(1)} at the end of the run), Node ${process.version},
SQLite ${sqliteVersion} (${rawSqliteDriver()}) on a file in ${tmpdir()}, redis-server ${version('redis-server', ['--version'], /v=(\S+)/)} and
PostgreSQL ${version(join(postgresBinDir() ?? '', 'postgres'), ['--version'], /(\d+\.\d+)/)} on 127.0.0.1 (the test setup's servers: PostgreSQL runs with
\`fsync=off\` and \`synchronous_commit=off\`, so its commits wait for no disk), ioredis ${packageVersion('ioredis')},
pg ${packageVersion('pg')}; ${N} deliveries per round, ${ROUNDS} rounds interleaved, medians; run
${new Date().toISOString().slice(0, 10)}.

Round trips per operation (Redis: commands the client sent; PostgreSQL: queries sent, named statements;
SQLite: statements run in the process, no network; ${COUNTED} operations each after the first use):

| store | per claim | per complete | per duplicate claim |
|---|---:|---:|---:|
${tripRows}

Latency of one operation, one delivery at a time (ms), and deliveries per second (claim + complete)
one at a time and with ${CONCURRENCY} in flight:

| store | claim p50 | claim p99 | complete p50 | complete p99 | duplicate claim p50 | deliveries/s sequential | deliveries/s, ${CONCURRENCY} in flight |
|---|---:|---:|---:|---:|---:|---:|---:|
${timeRows}
`;
console.log(`\n${section}`);
if (write) writeBenchSection('stores', section);

redis.disconnect();
await pool.end();
await redisServer.close();
await postgresServer.close();
rmSync(dir, { recursive: true, force: true });
