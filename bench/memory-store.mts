/**
 * Memory store benchmark: heap bytes per key at 1,000,000 keys, and claim+complete throughput with
 * 1k, 10k, 100k and 1M keys held (it should stay flat: every operation is O(1)), against a plain
 * `Map` get+set (the ceiling: no expiry, no LRU, no tokens). Writes its section of docs/benchmarks.md.
 *
 *   npx tsx bench/memory-store.mts        (re-runs itself with --expose-gc)
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createMemoryStore } from '../src/dedup/memory-store.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  const file = fileURLToPath(import.meta.url);
  const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}

const collect = () => {
  for (let i = 0; i < 3; i++) gc!();
};
const heap = () => {
  collect();
  return process.memoryUsage().heapUsed;
};
// Realistic keys: service namespace + a 36-character delivery id (UUID shape).
const keyOf = (i: number) => `crm:delivery:${i.toString(16).padStart(8, '0')}-7f3a-4c1d-9e2b-5a6b7c8d9e0f`;
const DAY = 86_400_000;

async function bytesPerKey(n: number, complete: boolean): Promise<number> {
  const keys = Array.from({ length: n }, (_, i) => keyOf(i)); // keys exist in the app anyway: not counted
  const before = heap();
  const store = createMemoryStore({ maxKeys: n });
  for (const key of keys) {
    const claim = await store.claim(key, { leaseMs: 30_000 });
    if (complete && claim.status === 'claimed') await store.complete(key, claim.token, { ttlMs: 90 * DAY });
  }
  const after = heap();
  if (store.size !== n) throw new Error(`size ${store.size}`);
  return (after - before) / n;
}

async function throughput(held: number, ops: number): Promise<{ store: number; dup: number; map: number }> {
  const store = createMemoryStore({ maxKeys: held });
  for (let i = 0; i < held; i++) {
    const claim = await store.claim(keyOf(i), { leaseMs: 30_000 });
    if (claim.status === 'claimed') await store.complete(keyOf(i), claim.token, { ttlMs: DAY });
  }
  const fresh = Array.from({ length: ops }, (_, i) => keyOf(held + i));
  let start = performance.now();
  for (const key of fresh) {
    const claim = await store.claim(key, { leaseMs: 30_000 }); // each evicts the oldest: stays at `held`
    if (claim.status === 'claimed') await store.complete(key, claim.token, { ttlMs: DAY });
  }
  const storeRate = ops / ((performance.now() - start) / 1000);
  const live = fresh.slice(-Math.min(held, ops)); // the keys still held after the evictions
  const dups = Array.from({ length: ops }, (_, i) => live[(i * 7919) % live.length]!);
  start = performance.now();
  for (const key of dups) await store.claim(key, { leaseMs: 30_000 }); // completed duplicates
  const dupRate = ops / ((performance.now() - start) / 1000);
  const map = new Map<string, number>();
  for (let i = 0; i < held; i++) map.set(keyOf(i), i);
  start = performance.now();
  for (const key of fresh) {
    if (map.get(key) === undefined) map.set(key, 1);
    await Promise.resolve(); // same number of awaits as claim (the store's API is async)
    map.set(key, 2);
    await Promise.resolve();
  }
  const mapRate = ops / ((performance.now() - start) / 1000);
  return { store: storeRate, dup: dupRate, map: mapRate };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const completedBytes = await bytesPerKey(1_000_000, true);
const claimBytes = await bytesPerKey(1_000_000, false);
console.log(
  `bytes/key at 1M: completed ${completedBytes.toFixed(0)}, in-flight claim ${claimBytes.toFixed(0)}`,
);

const rows: string[] = [];
await throughput(10_000, 200_000); // warm-up: JIT, not reported
for (const held of [1_000, 10_000, 100_000, 1_000_000]) {
  collect();
  const r = await throughput(held, 200_000);
  console.log(held, r);
  rows.push(`| ${fmt(held)} | ${fmt(r.store)} | ${fmt(r.dup)} | ${fmt(r.map)} |`);
}

const section = `### Memory dedup store (\`bench/memory-store.mts\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared), Node ${process.version}, run ${new Date().toISOString().slice(0, 10)}.
Keys: \`crm:delivery:<36-character id>\` (49 characters); the key strings themselves are not counted.

Heap per key at 1,000,000 keys (\`--expose-gc\`, heapUsed after/before): **${completedBytes.toFixed(0)} bytes** per completed
record, **${claimBytes.toFixed(0)} bytes** per in-flight claim (token and lease). The default cap of 100,000 keys is
therefore about ${((completedBytes + 72) * 0.1).toFixed(0)} MB including the 72-byte key strings.

Throughput (operations/s, one process, 200,000 operations per row). *claim+complete*: a new delivery,
evicting the least recently used key so the store stays at its size; *duplicate claim*: a completed key
claimed again; *Map ceiling*: \`Map.get\` + \`Map.set\` twice with the same awaits, no expiry/LRU/tokens.

| keys held | claim+complete/s | duplicate claim/s | Map ceiling/s |
|---:|---:|---:|---:|
${rows.join('\n')}
`;

const path = new URL('../docs/benchmarks.md', import.meta.url);
let doc = '';
try {
  doc = readFileSync(path, 'utf8');
} catch {
  doc = '# Benchmarks\n';
}
const [open, close] = ['<!-- bench:memory-store:start -->', '<!-- bench:memory-store:end -->'];
const block = `${open}\n${section}${close}`;
doc = doc.includes(open)
  ? doc.replace(new RegExp(`${open}[\\s\\S]*?${close}`), () => block)
  : `${doc.trimEnd()}\n\n${block}\n`;
writeFileSync(path, doc);
console.log('wrote docs/benchmarks.md section bench:memory-store');
