/**
 * Memory store benchmark: bytes per key at 1,000,000 keys, and claim+complete throughput with 1k, 10k,
 * 100k and 1M keys held (it should stay flat: every operation is O(1)), against a plain `Map` get+set
 * (the ceiling: no expiry, no LRU, no tokens). Rows run interleaved for several rounds; each cell is the
 * median. Writes its section of docs/benchmarks.md unless `--no-write`.
 *
 *   npx tsx bench/memory-store.mts [--no-write] [--rounds=3]      (re-runs itself with --expose-gc)
 */
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createMemoryStore } from '../src/dedup/memory-store.js';
import { writeBenchSection } from './docs-section.mjs';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  const file = fileURLToPath(import.meta.url);
  const args = ['--expose-gc', '--import', 'tsx', file, ...process.argv.slice(2)];
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
const write = !process.argv.includes('--no-write');
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 3);

const collect = () => {
  for (let i = 0; i < 3; i++) gc!();
};
// Typed arrays keep their contents outside the JS heap: count both, or a store built on them looks free.
const memory = () => {
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
// Realistic keys: service namespace + a 36-character delivery id (UUID shape), concatenated as the
// receivers build them. For memory, flat copies (join): the store may flatten a concatenated string when
// it reads it, which changes the size of a string the app holds, not of the store.
const keyOf = (i: number) => `crm:delivery:${i.toString(16).padStart(8, '0')}-7f3a-4c1d-9e2b-5a6b7c8d9e0f`;
const flatKeyOf = (i: number) =>
  ['crm:delivery:', i.toString(16).padStart(8, '0'), '-7f3a-4c1d-9e2b-5a6b7c8d9e0f'].join('');
const DAY = 86_400_000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Bytes per key held; `churn` more keys are claimed first, each evicting one, as at a busy store's cap. */
async function bytesPerKey(n: number, complete: boolean, churn = 0): Promise<number> {
  const keys = Array.from({ length: n }, (_, i) => flatKeyOf(churn + i)); // the app holds keys anyway: not counted
  const before = memory();
  const store = createMemoryStore({ maxKeys: n });
  const add = async (key: string) => {
    const claim = await store.claim(key, { leaseMs: 30_000 });
    if (complete && claim.status === 'claimed') await store.complete(key, claim.token, { ttlMs: 90 * DAY });
  };
  for (let i = 0; i < churn; i++) await add(flatKeyOf(i)); // evicted below: garbage by the time memory() runs
  for (const key of keys) await add(key);
  const after = memory();
  // Read both after measuring, so neither can be collected early (the key strings must not count).
  if (store.size !== n || keys.length !== n) throw new Error(`size ${store.size}`);
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
const churnedBytes = await bytesPerKey(1_000_000, true, 1_000_000);
console.log(
  `bytes/key at 1M: completed ${completedBytes.toFixed(0)}, in-flight claim ${claimBytes.toFixed(0)}, ` +
    `completed after 1M evictions ${churnedBytes.toFixed(0)}`,
);

const sizes = [1_000, 10_000, 100_000, 1_000_000];
const samples = sizes.map(() => ({ store: [] as number[], dup: [] as number[], map: [] as number[] }));
await throughput(10_000, 200_000); // warm-up: JIT, not reported
for (let round = 0; round < rounds; round++) {
  for (const [i, held] of sizes.entries()) {
    collect();
    const r = await throughput(held, 200_000);
    const line = [r.store, r.dup, r.map].map(fmt).join(' ');
    console.log(
      `round ${round + 1} ${fmt(held)} keys: store dup map/s ${line} ratio ${(r.store / r.map).toFixed(2)}`,
    );
    samples[i]!.store.push(r.store);
    samples[i]!.dup.push(r.dup);
    samples[i]!.map.push(r.map);
  }
}
const rows = sizes.map((held, i) => {
  const s = samples[i]!;
  const ratio = median(s.store.map((rate, k) => rate / s.map[k]!)); // within a run: noise cancels
  return `| ${fmt(held)} | ${fmt(median(s.store))} | ${fmt(median(s.dup))} | ${fmt(median(s.map))} | ${ratio.toFixed(2)} |`;
});
const flat = median(samples[0]!.store) / median(samples[sizes.length - 1]!.store);
console.log(rows.join('\n'));
console.log(`claim+complete: 1k keys / 1M keys = ${flat.toFixed(2)}x`);

const section = `### Memory dedup store (\`bench/memory-store.mts\`)

Machine: ${cpus()[0]?.model ?? 'unknown'} (${cpus().length} vCPU, shared), Node ${process.version}, run ${new Date().toISOString().slice(0, 10)}.
Keys: \`crm:delivery:<36-character id>\` (49 characters), built by concatenation as the receivers do; the key
strings themselves are not counted (the memory figures use flat copies, which the store does not resize).

Memory per key at 1,000,000 keys (\`--expose-gc\`, heapUsed + arrayBuffers after/before): **${completedBytes.toFixed(0)} bytes**
per completed record, **${claimBytes.toFixed(0)} bytes** per in-flight claim (token and lease), **${churnedBytes.toFixed(0)} bytes**
per completed record at the cap after another 1,000,000 deliveries evicted as many. The default cap of
100,000 keys is therefore about ${((churnedBytes + 72) * 0.1).toFixed(0)} MB including the 72-byte key strings.

Throughput (operations/s, one process, 200,000 operations per row, median of ${rounds} interleaved rounds).
*claim+complete*: a new delivery, evicting the least recently used key so the store stays at its size;
*duplicate claim*: a completed key claimed again; *Map ceiling*: \`Map.get\` + \`Map.set\` twice with the
same awaits, no expiry/LRU/tokens/eviction; *ratio*: claim+complete / Map ceiling, median of the rounds.
claim+complete at 1,000 keys is ${flat.toFixed(2)}× its rate at 1,000,000 keys.

| keys held | claim+complete/s | duplicate claim/s | Map ceiling/s | ratio |
|---:|---:|---:|---:|---:|
${rows.join('\n')}
`;

if (write) {
  writeBenchSection('memory-store', section);
} else {
  console.log(`--no-write: docs/benchmarks.md untouched. Section would be:\n\n${section}`);
}
