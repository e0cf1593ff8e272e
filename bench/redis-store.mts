/**
 * Redis store benchmark on a real redis-server on loopback (started from the machine's binary):
 * commands (= round trips) per claim and per complete counted with `INFO commandstats`, and claims/s
 * sequential and concurrent with ioredis and node-redis, against the ceiling of one plain
 * `SET key value NX PX` (a lock without fencing, completion or takeover). Writes its section of
 * docs/benchmarks.md.
 *
 *   npx tsx bench/redis-store.mts
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
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

const version = (pkg: string) =>
  JSON.parse(readFileSync(new URL(`../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;
const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1];
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
