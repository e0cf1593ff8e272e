import { createMemoryStore } from '@svc/webhooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MEMORY_STORE_MAX_KEYS, type MemoryStore } from '../../src/dedup/memory-store.js';
import { createManualClock } from '../support/clock.js';
import { forEachStore } from '../support/stores.js';
import { storeContract } from './contract.js';

forEachStore(storeContract, ['memory']);

describe('memory store specifics', () => {
  it('evicts the least recently used key past maxKeys, so memory stays bounded', async () => {
    const store = createMemoryStore({ maxKeys: 3, clock: createManualClock() });
    const a = await store.claim('a', { leaseMs: 1_000 });
    if (a.status !== 'claimed') throw new Error('a not claimed');
    await store.complete('a', a.token, { ttlMs: 60_000 });
    await store.claim('b', { leaseMs: 1_000 });
    await store.claim('c', { leaseMs: 1_000 });
    expect(await store.claim('a', { leaseMs: 1_000 })).toEqual({ status: 'completed' }); // a is now most recent
    await store.claim('d', { leaseMs: 1_000 }); // evicts b
    expect(store.size).toBe(3);
    expect((await store.claim('b', { leaseMs: 1_000 })).status).toBe('claimed'); // evicted: runs again; evicts c
    expect(await store.claim('a', { leaseMs: 1_000 })).toEqual({ status: 'completed' });
    expect(store.size).toBe(3);
  });

  it('stays at maxKeys under many distinct keys', async () => {
    const store = createMemoryStore({ maxKeys: 1_000 });
    for (let i = 0; i < 5_000; i++) await store.claim(`k${i}`, { leaseMs: 1_000 });
    expect(store.size).toBe(1_000);
    expect(DEFAULT_MEMORY_STORE_MAX_KEYS).toBe(100_000);
  });

  it('is atomic without locks: state changes before the promise settles', async () => {
    const store = createMemoryStore();
    const first = store.claim('k', { leaseMs: 1_000 });
    const second = store.claim('k', { leaseMs: 1_000 });
    expect([(await first).status, (await second).status]).toEqual(['claimed', 'in_progress']);
  });

  it('close() forgets everything', async () => {
    const store = createMemoryStore();
    await store.claim('k', { leaseMs: 1_000 });
    await store.close();
    expect(store.size).toBe(0);
  });

  it('rejects a bad maxKeys', () => {
    expect(() => createMemoryStore({ maxKeys: 0 })).toThrow(RangeError);
  });
});

describe('memory store recency and slot reuse', () => {
  const LEASE = { leaseMs: 1_000 };
  async function claimed(store: MemoryStore, key: string): Promise<string> {
    const result = await store.claim(key, LEASE);
    if (result.status !== 'claimed') throw new Error(`${key}: expected claimed, got ${result.status}`);
    return result.token;
  }

  it('a duplicate of an in-progress claim does not refresh its recency; a takeover does', async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ maxKeys: 2, clock });
    await claimed(store, 'a');
    await claimed(store, 'b');
    expect((await store.claim('a', LEASE)).status).toBe('in_progress'); // a stays the least recent
    await claimed(store, 'c'); // evicts a
    expect((await store.claim('b', LEASE)).status).toBe('in_progress');
    await claimed(store, 'a'); // evicted, so free again; evicts b
    clock.advance(1_000); // every lease lapses
    await claimed(store, 'c'); // taken over: c becomes the most recent
    await claimed(store, 'd'); // evicts a, not c
    expect((await store.claim('c', LEASE)).status).toBe('in_progress');
    expect((await store.claim('a', LEASE)).status).toBe('claimed');
  });

  it('release frees the slot: the next key takes it without evicting anyone', async () => {
    const store = createMemoryStore({ maxKeys: 3, clock: createManualClock() });
    await claimed(store, 'a');
    const b = await claimed(store, 'b');
    await claimed(store, 'c');
    expect(await store.release('b', b)).toBe(true);
    expect(store.size).toBe(2);
    await claimed(store, 'd');
    expect(store.size).toBe(3);
    for (const key of ['a', 'c', 'd']) expect((await store.claim(key, LEASE)).status).toBe('in_progress');
    await claimed(store, 'e'); // full again: evicts a, the least recent
    expect((await store.claim('a', LEASE)).status).toBe('claimed');
  });

  it('prune frees slots that new keys reuse, keeping the live keys and their order', async () => {
    const clock = createManualClock();
    const store = createMemoryStore({ maxKeys: 4, clock });
    const a = await claimed(store, 'a');
    await store.complete('a', a, { ttlMs: 60_000 });
    await claimed(store, 'b');
    await claimed(store, 'c');
    const d = await claimed(store, 'd');
    await store.complete('d', d, { ttlMs: 60_000 });
    clock.advance(1_000); // the claims of b and c lapse; a and d are completed for a minute
    expect(await store.prune()).toBe(2);
    expect(store.size).toBe(2);
    await claimed(store, 'e');
    await claimed(store, 'f');
    expect(store.size).toBe(4);
    expect(await store.claim('a', LEASE)).toEqual({ status: 'completed' }); // order now d, e, f, a
    await claimed(store, 'g'); // evicts d
    expect((await store.claim('d', LEASE)).status).toBe('claimed');
    expect(await store.claim('a', LEASE)).toEqual({ status: 'completed' });
  });

  it('works again after close()', async () => {
    const store = createMemoryStore({ maxKeys: 2, clock: createManualClock() });
    for (let i = 0; i < 600; i++) await claimed(store, `k${i}`);
    await store.close();
    expect(store.size).toBe(0);
    expect((await store.claim('k599', LEASE)).status).toBe('claimed');
    await claimed(store, 'x');
    await claimed(store, 'y'); // evicts k599
    expect((await store.claim('k599', LEASE)).status).toBe('claimed');
    expect(store.size).toBe(2);
  });

  it('behaves like a plain LRU map model under random operations', async () => {
    // Few slots in a small table, so keys often share a probe run and removals shift entries back.
    const small = { maxKeys: fc.integer({ min: 1, max: 12 }), keys: 24, length: 400, runs: 400 };
    // More keys than the first slot allocation (256), so the arrays and the hash table grow under load.
    const large = { maxKeys: fc.integer({ min: 257, max: 700 }), keys: 900, length: 4_000, runs: 8 };
    for (const setup of [small, large]) {
      await fc.assert(
        fc.asyncProperty(
          setup.maxKeys,
          fc.array(opArb(setup.keys), { maxLength: setup.length, size: 'max' }),
          runModel,
        ),
        { numRuns: setup.runs },
      );
    }
  });
});

type Op =
  | { op: 'claim'; key: number; ms: number }
  | { op: 'complete' | 'release' | 'extend'; key: number; pick: number; ms: number }
  | { op: 'advance'; ms: number }
  | { op: 'prune' };

function opArb(keys: number): fc.Arbitrary<Op> {
  const key = fc.nat({ max: keys - 1 });
  const ms = fc.integer({ min: 1, max: 50 });
  const write = fc.constantFrom('complete' as const, 'release' as const, 'extend' as const);
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant('claim' as const), key, ms }) },
    { weight: 4, arbitrary: fc.record({ op: write, key, pick: fc.nat({ max: 3 }), ms }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.nat({ max: 40 }) }) },
    { weight: 1, arbitrary: fc.constant({ op: 'prune' as const }) },
  );
}

/** Runs `ops` on a memory store and on a reference model (a Map in recency order); every result must match. */
async function runModel(maxKeys: number, ops: Op[]): Promise<void> {
  const clock = createManualClock();
  const store = createMemoryStore({ maxKeys, clock });
  const model = new Map<string, { token: string | undefined; endsAt: number }>();
  const tokens = new Map<string, string[]>(); // every token the store gave per key, newest last
  const nameOf = (i: number) => `crm:delivery:${i}`;
  const owned = (key: string, token: string) => {
    const entry = model.get(key);
    return entry?.token === token && entry.endsAt > clock.now() ? entry : undefined;
  };
  for (const step of ops) {
    const now = clock.now();
    if (step.op === 'advance') clock.advance(step.ms);
    else if (step.op === 'prune') {
      let expired = 0;
      for (const [key, entry] of model) if (entry.endsAt <= now && model.delete(key)) expired++;
      expect(await store.prune()).toBe(expired);
    } else if (step.op === 'claim') {
      const key = nameOf(step.key);
      const actual = await store.claim(key, { leaseMs: step.ms });
      const entry = model.get(key);
      if (entry && entry.endsAt > now && entry.token !== undefined) {
        expect(actual).toEqual({ status: 'in_progress', leaseEndsAt: entry.endsAt });
      } else if (entry && entry.endsAt > now) {
        expect(actual).toEqual({ status: 'completed' });
        model.delete(key);
        model.set(key, entry);
      } else {
        expect(actual).toMatchObject({ status: 'claimed', leaseEndsAt: now + step.ms });
        const token = (actual as { token: string }).token;
        tokens.set(key, [...(tokens.get(key) ?? []), token]);
        model.delete(key);
        model.set(key, { token, endsAt: now + step.ms });
        if (model.size > maxKeys) model.delete(model.keys().next().value!);
      }
    } else {
      const key = nameOf(step.key);
      // The key's newest token, a stale one, another key's newest token, or one never issued.
      const own = tokens.get(key) ?? [];
      const choices = [own.at(-1), own.at(-2), tokens.get(nameOf(step.key + 1))?.at(-1), 'never-issued'];
      const token = choices[step.pick] ?? 'never-issued';
      const entry = owned(key, token);
      if (step.op === 'complete') {
        expect(await store.complete(key, token, { ttlMs: step.ms })).toBe(entry !== undefined);
        if (entry) Object.assign(entry, { token: undefined, endsAt: now + step.ms });
      } else if (step.op === 'release') {
        expect(await store.release(key, token)).toBe(entry !== undefined);
        if (entry) model.delete(key);
      } else {
        expect(await store.extend(key, token, { leaseMs: step.ms })).toBe(entry !== undefined);
        if (entry) entry.endsAt = now + step.ms;
      }
    }
    expect(store.size).toBe(model.size);
  }
}
