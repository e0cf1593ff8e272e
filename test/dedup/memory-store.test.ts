import { createMemoryStore, DEFAULT_MEMORY_STORE_MAX_KEYS } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
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
