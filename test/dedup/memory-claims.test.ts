/**
 * The memory store's synchronous claims (src/dedup/memory-claims.ts): a held claim writes by the slot
 * its claim took, so a slot evicted and given to another key, or a lease that lapsed and was taken
 * over, fences the old claim off (`false`) without touching the new owner's record.
 */
import { createMemoryStore } from '@svc/webhooks';
import { createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';
import { memoryClaimsOf } from '../../src/dedup/memory-store.js';

const TERMS = { leaseMs: 1_000, ttlMs: 60_000, callTimeoutMs: 2_000 };

function claimsOn(store: ReturnType<typeof createMemoryStore>) {
  const claims = memoryClaimsOf(store, TERMS);
  if (!claims) throw new Error('a memory store has synchronous claims');
  return claims;
}

describe("the memory store's synchronous claims", () => {
  it('are found only for a store createMemoryStore made, not for a copy of one', () => {
    const store = createMemoryStore();
    expect(memoryClaimsOf(store, TERMS)?.sync).toBe(true);
    expect(memoryClaimsOf({ ...store }, TERMS)).toBeUndefined();
  });

  it('claim, extend and complete a key; the next claim is a duplicate', async () => {
    const clock = createVirtualClock({ start: 1_000 });
    const store = createMemoryStore({ clock });
    const claims = claimsOn(store);
    const held = claims.claim('k');
    if (held.status !== 'claimed') throw new Error('claimed expected');
    expect(claims.claim('k')).toEqual({ status: 'busy', leaseEndsAt: 2_000 });
    await clock.advance(900);
    expect(held.extend!()).toBe(true);
    await clock.advance(900); // past the first lease, inside the extended one
    expect(held.complete()).toBe(true);
    expect(claims.claim('k')).toEqual({ status: 'duplicate' });
    expect(await store.claim('k', { leaseMs: 1_000 })).toEqual({ status: 'completed' });
  });

  it('a claim whose slot went to another key is fenced off and leaves that key alone', async () => {
    const store = createMemoryStore({ maxKeys: 1 });
    const claims = claimsOn(store);
    const old = claims.claim('a');
    if (old.status !== 'claimed') throw new Error('claimed expected');
    // One key at most: claiming `b` evicts `a` and reuses its slot.
    const other = await store.claim('b', { leaseMs: 1_000 });
    expect(other.status).toBe('claimed');
    expect(old.complete()).toBe(false);
    expect(old.release()).toBe(false);
    expect(old.extend!()).toBe(false);
    expect(await store.claim('b', { leaseMs: 1_000 })).toMatchObject({ status: 'in_progress' });
    if (other.status === 'claimed')
      expect(await store.complete('b', other.token, { ttlMs: 1_000 })).toBe(true);
  });

  it('a lapsed lease taken over by another claim is fenced off', async () => {
    const clock = createVirtualClock({ start: 1_000 });
    const claims = claimsOn(createMemoryStore({ clock }));
    const old = claims.claim('k');
    await clock.advance(1_000); // the lease ended
    expect(old.status === 'claimed' && old.complete()).toBe(false);
    const next = claims.claim('k');
    if (old.status !== 'claimed' || next.status !== 'claimed') throw new Error('claimed expected');
    expect(old.release()).toBe(false);
    expect(next.complete()).toBe(true);
  });

  it('an invalid key fails the claim instead of throwing', () => {
    const claims = claimsOn(createMemoryStore());
    expect(claims.claim('')).toMatchObject({ status: 'failed', error: { code: 'options_invalid' } });
  });
});
