/**
 * Redis store benchmark on a real redis-server on loopback (started from the machine's binary):
 * commands (= round trips) per claim and per complete counted with `INFO commandstats`, and claims/s
 * sequential and concurrent with ioredis and node-redis, against the ceiling of one plain
 * `SET key value NX PX` (a lock without fencing, completion or takeover). Writes its section of
 * docs/benchmarks.md.
 *
 *   npx tsx bench/redis-store.mts
 *
 * `--interleaved [rounds] [deliveries]` measures instead the goal "at 16 in flight ≥ 0.7× the raw
 * statements" on a loaded machine: ioredis, 16 in flight on one connection, the store's claim +
 * complete against the raw `SET NX PX` + `SET XX PX` of one delivery, in rounds run back to back in
 * this process (raw, store, store, raw, …: each contender goes first every other pair). The rate
 * ratio of each pair is taken within its own pair, and the median of those ratios reported, with
 * the Redis server's CPU per delivery and per command (`INFO commandstats`, reset before each pass)
 * and this process's. Writes its own section (bench:redis-16-in-flight).
 *
 *   npx tsx bench/redis-store.mts --interleaved 41 2000
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createRedisStore } from '../src/dedup/redis.js';
import type { RedisClientLike } from '../src/dedup/redis-client.js';
import { startRedis } from '../test/support/servers.js';
import { writeBenchSection } from './docs-section.mjs';

const server = await startRedis();
const admin = new Redis(server.port, '127.0.0.1');
const ioredis = new Redis(server.port, '127.0.0.1');
const nodeRedis = await createClient({ url: server.url }).connect();

// Round trips = commands the client sent: EVALSHA/EVAL. (commandstats also counts the GET/SET/TIME
// that run inside the script, reported separately.)
async function commandCount(): Promise<{ sent: number; inScript: number }> {
  const info = await admin.info('commandstats');
  let sent = 0;
  let inScript = 0;
  for (const [, name, calls] of info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) {
    if (name === 'evalsha' || name === 'eval') sent += Number(calls);
    else if (name !== 'info' && name !== 'config') inScript += Number(calls);
  }
  return { sent, inScript };
}

// Cross-check with MONITOR: commands whose source is a client connection, not "lua".
async function monitored(work: () => Promise<void>): Promise<number> {
  const monitor = await admin.monitor();
  let count = 0;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && !/^(ping|info|config)$/i.test(args[0] ?? '')) count++;
  });
  await work();
  await new Promise((resolve) => setTimeout(resolve, 200)); // let MONITOR output drain
  monitor.disconnect();
  return count;
}

async function rate(
  total: number,
  concurrency: number,
  op: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await op(next++);
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const version = (pkg: string) =>
  JSON.parse(readFileSync(new URL(`../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1];

// --- interleaved: the store against the raw statements at 16 in flight, pair by pair ---------------
const LEASE_MS = 30_000;
const TTL_MS = 86_400_000;
let sequence = 0;
const keyOf = () => `crm:delivery:${(++sequence).toString(16).padStart(8, '0')}-7f3a-4c1d-9e2b-5a6b7c8d9e0f`;

interface Pass {
  rate: number;
  /** The server process's CPU per delivery (µs, INFO cpu: network reads and writes included). */
  serverCpuUs: number;
  /** Commands' time per delivery (µs, INFO commandstats summed: a script's inner commands twice). */
  serverUs: number;
  commands: Map<string, { calls: number; usec: number }>;
  /** This process's CPU per delivery (µs). */
  processUs: number;
}

async function pass(deliver: (key: string) => Promise<void>, n: number, inFlight: number): Promise<Pass> {
  await admin.config('RESETSTAT');
  const server0 = await serverCpu();
  const cpu0 = process.cpuUsage();
  const rate = await (async () => {
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next++ < n) await deliver(keyOf());
      }),
    );
    return n / ((performance.now() - start) / 1000);
  })();
  const { user, system } = process.cpuUsage(cpu0);
  const serverCpuUs = ((await serverCpu()) - server0) / n;
  const commands = new Map<string, { calls: number; usec: number }>();
  let usec = 0;
  for (const [, name, calls, micros] of (await admin.info('commandstats')).matchAll(
    /cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g,
  )) {
    if (/^(config|info)\b/.test(name!)) continue; // the bench's own RESETSTAT and INFO
    commands.set(name!, { calls: Number(calls), usec: Number(micros) });
    usec += Number(micros);
  }
  return { rate, serverCpuUs, serverUs: usec / n, commands, processUs: (user + system) / n };
}

/** The Redis server process's CPU time so far (µs of user + system, INFO cpu). */
async function serverCpu(): Promise<number> {
  const info = await admin.info('cpu');
  const field = (name: string) =>
    Number(info.match(new RegExp(`^${name}:([\\d.]+)`, 'm'))?.[1] ?? Number.NaN);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

async function interleaved(rounds: number, n: number, inFlight = 16): Promise<string> {
  const store = createRedisStore({ client: ioredis as RedisClientLike, prefix: 'bench:pairs:' });
  let token = 0;
  const contenders = {
    raw: async (key: string) => {
      const mine = `t${++token}`;
      if ((await ioredis.set(`raw:${key}`, `L:${mine}`, 'PX', LEASE_MS, 'NX')) !== 'OK')
        throw new Error('taken');
      if ((await ioredis.set(`raw:${key}`, `D:${mine}`, 'PX', TTL_MS, 'XX')) !== 'OK')
        throw new Error('lost');
    },
    store: async (key: string) => {
      const claim = await store.claim(key, { leaseMs: LEASE_MS });
      if (claim.status !== 'claimed') throw new Error(`${key}: ${claim.status}`);
      if (!(await store.complete(key, claim.token, { ttlMs: TTL_MS })))
        throw new Error(`${key}: not completed`);
    },
  };
  for (const deliver of Object.values(contenders)) await pass(deliver, 500, inFlight); // warm-up
  const passes = { raw: [] as Pass[], store: [] as Pass[] };
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? (['store', 'raw'] as const) : (['raw', 'store'] as const);
    const pair = {} as Record<'raw' | 'store', Pass>;
    for (const name of order) pair[name] = await pass(contenders[name], n, inFlight);
    passes.raw.push(pair.raw);
    passes.store.push(pair.store);
    ratios.push(pair.store.rate / pair.raw.rate);
    console.log(
      `pair ${round + 1}/${rounds}: raw ${fmt(pair.raw.rate)}/s, store ${fmt(pair.store.rate)}/s, store ÷ raw ${(pair.store.rate / pair.raw.rate).toFixed(2)}; server CPU µs/delivery raw ${pair.raw.serverCpuUs.toFixed(1)}, store ${pair.store.serverCpuUs.toFixed(1)}`,
    );
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const quartiles = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return `${at(0.25).toFixed(2)}–${at(0.75).toFixed(2)}`;
  };
  const below = ratios.filter((r) => r < 0.7).length;
  const perCommand = (list: Pass[]) => {
    const sum = new Map<string, { calls: number; usec: number }>();
    for (const p of list)
      for (const [name, c] of p.commands) {
        const entry = sum.get(name) ?? { calls: 0, usec: 0 };
        entry.calls += c.calls;
        entry.usec += c.usec;
        sum.set(name, entry);
      }
    const total = list.length * n;
    return [...sum]
      .map(([name, c]) => `\`${name}\` ${(c.calls / total).toFixed(2)} × ${(c.usec / c.calls).toFixed(2)} µs`)
      .join(', ');
  };
  const row = (name: string, list: Pass[]) =>
    `| ${name} | ${fmt(median(list.map((p) => p.rate)))} (${fmt(Math.min(...list.map((p) => p.rate)))}–${fmt(Math.max(...list.map((p) => p.rate)))}) | ${median(list.map((p) => p.serverCpuUs)).toFixed(1)} | ${median(list.map((p) => p.serverUs)).toFixed(1)} | ${median(list.map((p) => p.processUs)).toFixed(1)} | ${perCommand(list)} |`;
  const serverRatio =
    median(passes.raw.map((p) => p.serverCpuUs)) / median(passes.store.map((p) => p.serverCpuUs));
  const cpu = (list: Pass[]) => median(list.map((p) => p.serverCpuUs + p.processUs));
  // How sure the median ratio is: a bootstrap over the pairs (fixed seed, so a rerun of the same
  // ratios gives the same interval), the 2.5th and 97.5th percentiles of 10,000 resampled medians.
  let seed = 1;
  const random = () => {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  const medians = Array.from({ length: 10_000 }, () =>
    median(Array.from({ length: ratios.length }, () => ratios[Math.floor(random() * ratios.length)]!)),
  ).sort((a, b) => a - b);
  const interval = `${medians[250]!.toFixed(2)}–${medians[9_750]!.toFixed(2)}`;
  return `### Redis at 16 in flight, pair by pair (\`bench/redis-store.mts --interleaved\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU shared with redis-server and other work; load average
${loadavg()[0]?.toFixed(1)} at the end), Node ${process.version}, redis-server ${redisVersion} on 127.0.0.1, ioredis
${version('ioredis')}; run ${new Date().toISOString().slice(0, 10)}. ${rounds} pairs of ${n.toLocaleString('en-US')} deliveries per contender, ${inFlight} in flight on one
connection: the store's claim + complete against the raw \`SET key L:token PX 30000 NX\` + \`SET key
D:token PX 86400000 XX\`, each pair run back to back in one process, the first of a pair alternating.
Rates (deliveries/s) are medians with the lowest and highest pass. Per delivery, in µs, medians: the
Redis server process's CPU (\`INFO cpu\`, user + system: its network reads and writes included), the
time its commands took (\`INFO commandstats\` summed, as in \`bench/stores-raw.mts\`: a script's inner commands
count in the script's time and again on their own) and this process's CPU; then commands per
delivery × the server's µs per call, over all passes.

| contender | deliveries/s | Redis server process CPU | Redis commands' time | this process's CPU | commands per delivery × µs per call |
|---|---:|---:|---:|---:|---|
${row('raw statements', passes.raw)}
${row('store', passes.store)}

Store ÷ raw, each pair's own ratio: **median ${median(ratios).toFixed(2)}×** (95% bootstrap interval of the median
${interval}; quartiles ${quartiles(ratios)}; ${below} of ${rounds} pairs under 0.7×). CPU per delivery, raw ÷ store: the Redis
server process ${serverRatio.toFixed(2)}×, server and this process together **${(cpu(passes.raw) / cpu(passes.store)).toFixed(2)}×** (on a machine whose
cores are all busy, the rate at 16 in flight follows the CPU a delivery costs).
`;
}

const pairsAt = process.argv.indexOf('--interleaved');
if (pairsAt !== -1) {
  const rounds = Number(process.argv[pairsAt + 1] ?? 41);
  const n = Number(process.argv[pairsAt + 2] ?? 2_000);
  const section = await interleaved(rounds, n);
  console.log(`\n${section}`);
  writeBenchSection('redis-16-in-flight', section);
  admin.disconnect();
  ioredis.disconnect();
  nodeRedis.destroy();
  await server.close();
  process.exit(0);
}

const rows: string[] = [];
let counts = '';
for (const [name, client] of [
  ['ioredis', ioredis],
  ['node-redis', nodeRedis],
] as const) {
  const store = createRedisStore({ client: client as RedisClientLike, prefix: `bench:${name}:` });
  const warm = await store.claim('warm', { leaseMs: 30_000 }); // first use per script: NOSCRIPT + EVAL
  if (warm.status === 'claimed') await store.complete('warm', warm.token, { ttlMs: 60_000 });

  const N = 1_000;
  await admin.config('RESETSTAT');
  const tokens: string[] = [];
  for (let i = 0; i < N; i++) {
    const r = await store.claim(`count:${i}`, { leaseMs: 30_000 });
    if (r.status === 'claimed') tokens.push(r.token);
  }
  const afterClaims = await commandCount();
  for (let i = 0; i < N; i++) await store.complete(`count:${i}`, tokens[i]!, { ttlMs: 60_000 });
  const afterCompletes = await commandCount();
  for (let i = 0; i < N; i++) await store.claim(`count:${i}`, { leaseMs: 30_000 }); // completed duplicates
  const afterDups = await commandCount();
  const per = (a: number, b = 0) => (a - b) / N;
  const monitorClaim = await monitored(async () => {
    const r = await store.claim('monitor', { leaseMs: 30_000 });
    if (r.status === 'claimed') await store.complete('monitor', r.token, { ttlMs: 60_000 });
  });
  const line = [
    per(afterClaims.sent),
    per(afterCompletes.sent, afterClaims.sent),
    per(afterDups.sent, afterCompletes.sent),
    `${per(afterClaims.inScript)} / ${per(afterCompletes.inScript, afterClaims.inScript)}`,
    monitorClaim,
  ];
  counts += `| ${name} | ${line.join(' | ')} |\n`;
  console.log(name, line);

  const claimSeq = await rate(10_000, 1, (i) => store.claim(`seq:${i}`, { leaseMs: 30_000 }));
  const claimPar = await rate(50_000, 64, (i) => store.claim(`par:${i}`, { leaseMs: 30_000 }));
  const pairPar = await rate(25_000, 64, async (i) => {
    const r = await store.claim(`pair:${i}`, { leaseMs: 30_000 });
    if (r.status === 'claimed') await store.complete(`pair:${i}`, r.token, { ttlMs: 60_000 });
  });
  const set = (key: string) =>
    client === ioredis
      ? ioredis.set(key, '1', 'PX', 30_000, 'NX')
      : nodeRedis.set(key, '1', { condition: 'NX', expiration: { type: 'PX', value: 30_000 } });
  const setSeq = await rate(10_000, 1, (i) => set(`bench:set:${name}:seq:${i}`));
  const setPar = await rate(50_000, 64, (i) => set(`bench:set:${name}:par:${i}`));
  console.log(name, { claimSeq, claimPar, pairPar, setSeq, setPar });
  rows.push(
    `| ${name} | ${fmt(claimSeq)} | ${fmt(claimPar)} | ${fmt(pairPar)} | ${fmt(setSeq)} | ${fmt(setPar)} |`,
  );
}

const section = `### Redis dedup store (\`bench/redis-store.mts\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared with the client), Node ${process.version},
redis-server ${redisVersion} on 127.0.0.1, ioredis ${version('ioredis')}, redis (node-redis) ${version('redis')},
run ${new Date().toISOString().slice(0, 10)}.

Round trips per operation: commands the client sent (\`EVALSHA\` calls in \`INFO commandstats\`, 1,000
operations each, after the first use of each script), the commands the script ran inside Redis (TIME, GET,
SET: no network), and a cross-check with \`MONITOR\` counting non-script commands of one claim + complete:

| client | round trips per claim | per complete | per duplicate claim | in-script commands claim / complete | MONITOR: claim + complete |
|---|---:|---:|---:|---:|---:|
${counts}
Throughput (operations/s). *sequential*: one at a time; *concurrent*: 64 in flight on one connection
(pipelined by the client); *claim+complete*: a whole delivery's store work. The ceiling is one plain
\`SET key 1 PX 30000 NX\` through the same client.

| client | claim seq/s | claim conc/s | claim+complete conc/s | SET NX seq/s (ceiling) | SET NX conc/s (ceiling) |
|---|---:|---:|---:|---:|---:|
${rows.join('\n')}
`;

writeBenchSection('redis-store', section);

admin.disconnect();
ioredis.disconnect();
nodeRedis.destroy();
await server.close();
