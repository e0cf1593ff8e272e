/**
 * Memory store bytes per completed record **including its key string**, by key length, at 100,000
 * keys (the default `maxKeys`): what a sender's choice of id or `message_id` can cost. Keys come from
 * requests, so unlike bench/memory-store.mts the key strings are counted. Prints the table of
 * docs/benchmarks.md "Memory store: bytes per record by key".
 *
 *   npx tsx bench/dedup-key-bytes.mts      (re-runs itself with --expose-gc)
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { boundDedupKey, DEDUP_KEY_HASH_ABOVE } from '../src/dedup/bound-key.js';
import { createMemoryStore, DEFAULT_MEMORY_STORE_MAX_KEYS } from '../src/dedup/memory-store.js';
import { MAX_DEDUP_KEY_LENGTH } from '../src/dedup/validate.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  const file = fileURLToPath(import.meta.url);
  const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
const memory = () => {
  for (let i = 0; i < 3; i++) gc!();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};
const N = DEFAULT_MEMORY_STORE_MAX_KEYS;

// A flat key of exactly `length` characters; `wide` adds one non-Latin-1 character, which makes V8
// store the whole string with 2 bytes per character.
function keyOf(i: number, length: number, wide: boolean): string {
  const head = `mail:delivery:${i.toString(36)}-${wide ? '✓' : ''}`;
  return [head, 'x'.repeat(Math.max(0, length - head.length))].join('');
}

async function bytesPerRecord(length: number, wide: boolean, bound: boolean): Promise<number> {
  const before = memory();
  const store = createMemoryStore({ maxKeys: N });
  for (let i = 0; i < N; i++) {
    const raw = keyOf(i, length, wide);
    const key = bound ? boundDedupKey('mail', raw) : raw;
    const claim = await store.claim(key, { leaseMs: 30_000 });
    if (claim.status === 'claimed') await store.complete(key, claim.token, { ttlMs: 86_400_000 });
  }
  const after = memory();
  if (store.size !== N) throw new Error(`size ${store.size}`);
  return (after - before) / N;
}

const rows: [string, number, boolean, boolean][] = [
  ['typical dedup key (54 chars)', 54, false, true],
  [`longest key kept as is (${DEDUP_KEY_HASH_ABOVE} chars, ASCII)`, DEDUP_KEY_HASH_ABOVE, false, true],
  [`longest key kept as is (${DEDUP_KEY_HASH_ABOVE} chars, 2-byte)`, DEDUP_KEY_HASH_ABOVE, true, true],
  ['8,000-char key, hashed by the receiver (76 chars)', 8_000, false, true],
  [`store maximum, direct use (${MAX_DEDUP_KEY_LENGTH} chars, 2-byte)`, MAX_DEDUP_KEY_LENGTH, true, false],
];
console.log(`| key | bytes per record | × ${N.toLocaleString('en-US')} keys |`);
console.log('|---|---:|---:|');
for (const [label, length, wide, bound] of rows) {
  const bytes = await bytesPerRecord(length, wide, bound);
  console.log(`| ${label} | ${bytes.toFixed(0)} | ${((bytes * N) / 1_048_576).toFixed(0)} MiB |`);
}
