/**
 * Hand-off benchmark (docs/handoff.md), everything in one run on real servers started from the
 * machine's binaries (PostgreSQL, redis-server on 127.0.0.1):
 *
 * 1. Ack latency over HTTP (node:http, keep-alive, one request at a time), no-op handler: direct mode
 *    (memory store; Postgres store) against hand-off mode (pg-boss; BullMQ).
 * 2. Round trips to the engine per delivery: statements pg-boss sends (counted on the client, through
 *    pg-boss's `db` option), and Redis commands of BullMQ (`INFO commandstats`).
 * 3. End-to-end throughput with 1, 2 and 4 worker processes per engine (bench/handoff-worker.mts),
 *    no-op handler, from a full queue.
 *
 *   npx tsx bench/handoff.mts          (writes its section of docs/benchmarks.md)
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createNodeListener } from '../src/adapters/node/index.js';
import { createPostgresStore } from '../src/dedup/postgres.js';
import { createBullmqHandoff } from '../src/handoff/bullmq/index.js';
import { createPgBossHandoff } from '../src/handoff/pg-boss/index.js';
import { createCrmReceiver, createMemoryStore, type HandoffTarget } from '../src/index.js';
import { CRM_SECRET, crmDelivery } from '../test/receivers/support.js';
import { startPostgres, startRedis } from '../test/support/servers.js';
import { writeBenchSection } from './docs-section.mjs';

const LATENCY_N = Number(process.env.LATENCY_N ?? 2_000);
const THROUGHPUT_N = Number(process.env.THROUGHPUT_N ?? 4_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const load = loadavg()[0]!.toFixed(1);

const postgres = await startPostgres();
const redisServer = await startRedis();
const pool = new pg.Pool({ connectionString: postgres.connectionString, max: 10 });
let sequence = 0;
const unique = (prefix: string) => `${prefix}_${++sequence}`;

// -- engines ------------------------------------------------------------------------------------
let statements = 0;
const countingPool = new pg.Pool({ connectionString: postgres.connectionString, max: 10 });
async function pgBossEngine(counting = false) {
  const schema = unique('pgboss');
  const boss = new PgBoss({
    connectionString: postgres.connectionString,
    schema,
    ...(counting
      ? {
          db: {
            executeSql: (text: string, values?: unknown[]) => {
              statements++;
              return countingPool.query(text, values as unknown[]);
            },
          },
        }
      : {}),
  });
  boss.on('error', () => {});
  await boss.start();
  const queue = unique('webhooks');
  const handoff = createPgBossHandoff({ boss, queue });
  await handoff.createQueues();
  return { boss, schema, queue, handoff, stop: () => boss.stop({ graceful: false }) };
}
const admin = new Redis(redisServer.port, '127.0.0.1');
async function bullmqEngine() {
  const name = unique('webhooks');
  const connection = new Redis(redisServer.port, '127.0.0.1', { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const queue = new Queue(name, { connection });
  const handoff = createBullmqHandoff({ queue });
  const stop = async () => {
    await queue.close();
    connection.disconnect();
  };
  return { queue, name, handoff, stop };
}

// -- 1. ack latency -----------------------------------------------------------------------------
async function latencies(receiverOptions: {
  dedup?: ReturnType<typeof createMemoryStore>;
  handoff?: HandoffTarget;
}) {
  const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, ...receiverOptions }).onAny(
    () => {},
  );
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const deliveries = Array.from({ length: LATENCY_N + 200 }, () => crmDelivery('deal.won'));
  const times: number[] = [];
  for (const [i, delivery] of deliveries.entries()) {
    const t0 = performance.now();
    const response = await fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    if (i >= 200) times.push(performance.now() - t0); // the first 200 warm up
  }
  server.closeAllConnections();
  server.close();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const modes = [
  'direct, memory store',
  'direct, Postgres store',
  'hand-off, pg-boss',
  'hand-off, BullMQ',
] as const;
const latency = new Map<string, { p50: number[]; p99: number[] }>(
  modes.map((m) => [m, { p50: [], p99: [] }]),
);
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of modes) {
    let result: { p50: number; p99: number };
    if (mode === 'direct, memory store') result = await latencies({ dedup: createMemoryStore() });
    else if (mode === 'direct, Postgres store') {
      const dedup = createPostgresStore({ client: pool, table: unique('dedup') });
      await dedup.migrate();
      result = await latencies({ dedup: dedup as never });
    } else if (mode === 'hand-off, pg-boss') {
      const engine = await pgBossEngine();
      result = await latencies({ handoff: engine.handoff });
      await engine.stop();
    } else {
      const engine = await bullmqEngine();
      result = await latencies({ handoff: engine.handoff });
      await engine.stop();
    }
    latency.get(mode)!.p50.push(result.p50);
    latency.get(mode)!.p99.push(result.p99);
    console.log(
      `round ${round + 1} ${mode}: p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`,
    );
  }
}

// -- 2. round trips per delivery ----------------------------------------------------------------
const RT_N = 500;
const counted = await pgBossEngine(true);
const rtDeliveries = Array.from({ length: RT_N }, () => crmDelivery('deal.won'));
const rtReceiver = createCrmReceiver({
  secret: CRM_SECRET,
  logger: () => {},
  handoff: counted.handoff,
}).onAny(() => {});
const countStatements = async (deliveries: typeof rtDeliveries) => {
  await new Promise((resolve) => setTimeout(resolve, 200));
  const before = statements;
  for (const d of deliveries) await rtReceiver.receive({ body: d.body, headers: d.headers, method: 'POST' });
  return (statements - before) / deliveries.length;
};
const pgNew = await countStatements(rtDeliveries);
const pgDuplicate = await countStatements(rtDeliveries);
await counted.stop();

// Client round trips are the script calls (EVALSHA/EVAL) plus any plain command; INFO commandstats
// also counts the commands each script runs inside Redis, reported apart.
const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall']);
const commandCount = async () => {
  const info = await admin.info('commandstats');
  const counts = { scripts: 0, all: 0 };
  for (const [, name, calls] of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) {
    if (name === 'info') continue;
    counts.all += Number(calls);
    if (SCRIPT_COMMANDS.has(name!)) counts.scripts += Number(calls);
  }
  return counts;
};
const bull = await bullmqEngine();
const bullReceiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, handoff: bull.handoff }).onAny(
  () => {},
);
await bullReceiver.receive({ body: crmDelivery().body, headers: crmDelivery().headers, method: 'POST' }); // scripts loaded
const countCommands = async (deliveries: typeof rtDeliveries) => {
  const before = await commandCount();
  for (const d of deliveries)
    await bullReceiver.receive({ body: d.body, headers: d.headers, method: 'POST' });
  const after = await commandCount();
  return {
    scripts: (after.scripts - before.scripts) / deliveries.length,
    all: (after.all - before.all) / deliveries.length,
  };
};
const bullDeliveries = Array.from({ length: RT_N }, () => crmDelivery('deal.won'));
const redisNew = await countCommands(bullDeliveries);
const redisDuplicate = await countCommands(bullDeliveries);
await bull.stop();

// -- 3. throughput with 1, 2 and 4 worker processes ---------------------------------------------
const WORKER = fileURLToPath(new URL('./handoff-worker.mts', import.meta.url));
interface Worker {
  child: ChildProcess;
  count: number;
  /** pg-boss: SQL statements this process sent (engine and dedup store), cumulative. */
  statements: number;
  /** CPU time of this process, ms, cumulative. */
  cpuMs: number;
}
/** Busy and total jiffies of all cores, from /proc/stat. */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
interface RunResult {
  rate: number;
  perDelivery: number;
  allPerDelivery: number;
  machineBusy: number;
  workersShare: number;
}
function spawnWorker(env: Record<string, string>): Promise<Worker> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const worker: Worker = { child, count: 0, statements: 0, cpuMs: 0 };
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line === 'ready') resolve(worker);
        else if (line.startsWith('count ')) {
          const [, count, statements, cpuMs] = line.split(' ').map(Number);
          Object.assign(worker, { count, statements, cpuMs });
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
  });
}
async function throughput(engine: 'pg-boss' | 'bullmq', processes: number): Promise<RunResult> {
  const setup = engine === 'pg-boss' ? await pgBossEngine() : await bullmqEngine();
  const table = unique('dedup');
  if (engine === 'pg-boss') await createPostgresStore({ client: pool, table }).migrate();
  const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, handoff: setup.handoff }).onAny(
    () => {},
  );
  const deliveries = Array.from({ length: THROUGHPUT_N }, () => crmDelivery('deal.won'));
  for (let i = 0; i < deliveries.length; i += 64) {
    await Promise.all(
      deliveries
        .slice(i, i + 64)
        .map((d) => receiver.receive({ body: d.body, headers: d.headers, method: 'POST' })),
    );
  }
  const env: Record<string, string> =
    engine === 'pg-boss'
      ? {
          ENGINE: engine,
          DATABASE_URL: postgres.connectionString,
          SCHEMA: (setup as { schema: string }).schema,
          QUEUE: (setup as { queue: string }).queue,
          DEDUP_TABLE: table,
          CRM_SECRET,
        }
      : {
          ENGINE: engine,
          REDIS_PORT: String(redisServer.port),
          QUEUE: (setup as { name: string }).name,
          CRM_SECRET,
        };
  const workers = await Promise.all(Array.from({ length: processes }, () => spawnWorker(env)));
  await new Promise((r) => setTimeout(r, 300)); // the latest counters after start-up
  const before = workers.map((w) => ({ statements: w.statements, cpuMs: w.cpuMs }));
  const commandsBefore = await commandCount();
  const cpuBefore = machineCpu();
  const t0 = performance.now();
  for (const w of workers) w.child.kill('SIGUSR2');
  while (workers.reduce((n, w) => n + w.count, 0) < THROUGHPUT_N) await new Promise((r) => setTimeout(r, 20));
  const elapsedMs = performance.now() - t0;
  const cpuAfter = machineCpu();
  const commandsAfter = await commandCount();
  await new Promise((r) => setTimeout(r, 150)); // one more counter line from each worker
  for (const w of workers) w.child.kill('SIGKILL');
  await setup.stop();
  const workerCpuMs = workers.reduce((n, w, i) => n + w.cpuMs - before[i]!.cpuMs, 0);
  const statements = workers.reduce((n, w, i) => n + w.statements - before[i]!.statements, 0);
  const cores = cpus().length;
  return {
    rate: THROUGHPUT_N / (elapsedMs / 1000),
    perDelivery:
      engine === 'pg-boss'
        ? statements / THROUGHPUT_N
        : (commandsAfter.scripts - commandsBefore.scripts) / THROUGHPUT_N,
    allPerDelivery:
      engine === 'pg-boss'
        ? statements / THROUGHPUT_N
        : (commandsAfter.all - commandsBefore.all) / THROUGHPUT_N,
    machineBusy: (cpuAfter.busy - cpuBefore.busy) / (cpuAfter.total - cpuBefore.total),
    workersShare: workerCpuMs / (elapsedMs * cores),
  };
}
const rates = new Map<string, RunResult[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const engine of ['pg-boss', 'bullmq'] as const) {
    for (const processes of [1, 2, 4]) {
      const result = await throughput(engine, processes);
      const key = `${engine}:${processes}`;
      rates.set(key, [...(rates.get(key) ?? []), result]);
      console.log(
        `round ${round + 1} ${engine} ×${processes}: ${result.rate.toFixed(0)} deliveries/s, ${result.perDelivery.toFixed(2)} round trips/delivery, machine ${(result.machineBusy * 100).toFixed(0)}% busy, workers ${(result.workersShare * 100).toFixed(0)}%`,
      );
    }
  }
}

// -- report -------------------------------------------------------------------------------------
const pgVersion = execFileSync(
  'sh',
  ['-c', 'postgres --version 2>/dev/null || $(ls -d /usr/lib/postgresql/*/bin | tail -1)/postgres --version'],
  { encoding: 'utf8' },
).trim();
const redisVersion = (await admin.info('server')).match(/redis_version:(\S+)/)?.[1];
const version = (name: string) =>
  JSON.parse(
    execFileSync('node', ['-p', `JSON.stringify(require('${name}/package.json').version)`], {
      encoding: 'utf8',
    }),
  );
const direct = median(latency.get('direct, memory store')!.p50);
const ms = (v: number) => v.toFixed(2);
const postgresDirect = median(latency.get('direct, Postgres store')!.p50);
const rows = modes.map((mode) => {
  const { p50, p99 } = latency.get(mode)!;
  return `| ${mode} | ${ms(median(p50))} | ${ms(median(p99))} | ${(median(p50) / direct).toFixed(2)}× | ${(median(p50) / postgresDirect).toFixed(2)}× |`;
});
const pick = (engine: string, processes: number, field: keyof RunResult) =>
  median(rates.get(`${engine}:${processes}`)!.map((r) => r[field]));
const pct = (v: number) => `${(v * 100).toFixed(0)}%`;
const rateRow = (engine: string) =>
  `| ${engine} | ${[1, 2, 4].map((p) => pick(engine, p, 'rate').toFixed(0)).join(' | ')} | ${[1, 2, 4]
    .map((p) => `${pct(pick(engine, p, 'machineBusy'))} / ${pct(pick(engine, p, 'workersShare'))}`)
    .join(' | ')} |`;
const section = `
## Hand-off: ack latency, round trips, worker throughput (\`bench/handoff.mts\`)

Machine: ${cpus()[0]?.model.trim()} (${cpus().length} cores, shared with other work; 1-minute load average ${load} at the start), ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; ${pgVersion}, redis-server ${redisVersion} (both on 127.0.0.1, the test setup's servers: PostgreSQL with \`fsync=off\`), pg-boss ${version('pg-boss')}, bullmq ${version('bullmq')}; run ${new Date().toISOString().slice(0, 10)}. Medians of ${ROUNDS} interleaved rounds.

**Ack latency** over HTTP, ${LATENCY_N} CRM deliveries one at a time per round (keep-alive, after 200 warm-up requests), no-op handler, the client in the server's process. Direct mode runs the handler and records completion before answering; hand-off answers once the engine stored the job.

| mode | p50 ms | p99 ms | p50 / direct (memory store) | p50 / direct (Postgres store) |
|---|---:|---:|---:|---:|
${rows.join('\n')}

**Round trips to the engine per delivery** (hand-off receives no dedup claim: the engine's job id is the duplicate check). pg-boss: statements sent through its \`db\` option, ${RT_N} deliveries; BullMQ: Redis commands in \`INFO commandstats\` (the first delivery, which loads the scripts, not counted), ${RT_N} deliveries.

| engine | per new delivery | per duplicate delivery |
|---|---:|---:|
| pg-boss (SQL statements) | ${pgNew.toFixed(2)} | ${pgDuplicate.toFixed(2)} |
| BullMQ (script calls: EVALSHA) | ${redisNew.scripts.toFixed(2)} | ${redisDuplicate.scripts.toFixed(2)} |
| BullMQ (commands incl. those run inside the script) | ${redisNew.all.toFixed(2)} | ${redisDuplicate.all.toFixed(2)} |

**End-to-end throughput** (deliveries/s) from a queue holding ${THROUGHPUT_N} jobs to all handled, no-op handler, each worker process running 8 jobs at a time, with its dedup claim and completion (Postgres store with pg-boss, Redis store with BullMQ):

| engine | 1 worker process | 2 | 4 | CPU busy (machine / workers) ×1 | ×2 | ×4 |
|---|---:|---:|---:|---:|---:|---:|
${rateRow('pg-boss')}
${rateRow('bullmq')}

Round trips per handled delivery on the worker side (median run with 1 process): pg-boss
${pick('pg-boss', 1, 'perDelivery').toFixed(2)} SQL statements (a fetch and a settle per job, plus the dedup claim and
completion); BullMQ ${pick('bullmq', 1, 'perDelivery').toFixed(2)} script calls, ${pick('bullmq', 1, 'allPerDelivery').toFixed(2)} Redis commands counting those inside the scripts (the
dedup claim and completion are 1 script call each).

Reading: *CPU busy* is the share of both cores in use during the run (from \`/proc/stat\`, everything on
the machine) and the share the worker processes used themselves; the rest is the engine's server, the
bench process and other work on this shared machine. When the machine is near 100% busy, more
worker processes cannot add throughput on this machine: the cores, shared by the engine and the
workers, are the limit, not a lock or a serial step in our code.
`;
writeBenchSection('handoff', section);
console.log(section);
await pool.end();
await countingPool.end();
admin.disconnect();
await redisServer.close();
await postgres.close();
process.exit(0);
