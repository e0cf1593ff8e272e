/**
 * The claim port over a store a user writes (src/dedup/store-claims.ts): a plain object implementing
 * the public `DedupStore` protocol around a real memory store, claimed, completed, released and
 * extended through the port with the receiver's bound on every call, and a claim that stalls past the
 * delivery's deadline abandoned with the token the port chose, so its late run holds nothing.
 */
import { createMemoryStore, type DedupStore } from '@svc/webhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaimDeadline } from '../../src/dedup/claims.js';
import { claimsOver } from '../../src/dedup/store-claims.js';
import { deferred } from '../receivers/support.js';

const TERMS = { leaseMs: 1_000, ttlMs: 60_000, callTimeoutMs: 2_000 };
const PASSED = Symbol('passed');

/** A deadline that passes when `pass()` is called. */
function deadline(): ClaimDeadline & { pass(): void } {
  const passed = deferred();
  return {
    at: 0,
    race: (work) => Promise.race([work, passed.promise.then(() => PASSED)]),
    pass: () => passed.resolve(),
  };
}

type Call = { method: string; key: string; token?: string | undefined; options: unknown };

/** A user's store: plain functions over a real memory store, every call recorded. */
function plainStore(options: { abandon?: boolean; extend?: boolean } = {}) {
  const inner = createMemoryStore();
  const calls: Call[] = [];
  const store: DedupStore = {
    claim: (key, o) => {
      calls.push({ method: 'claim', key, token: o.token, options: o });
      return inner.claim(key, o);
    },
    complete: (key, token, o) => {
      calls.push({ method: 'complete', key, token, options: o });
      return inner.complete(key, token, o);
    },
    release: (key, token, o) => {
      calls.push({ method: 'release', key, token, options: o });
      return inner.release(key, token, o);
    },
  };
  if (options.abandon !== false)
    store.abandon = (key, token, o) => {
      calls.push({ method: 'abandon', key, token, options: o });
      return inner.abandon(key, token, o);
    };
  if (options.extend !== false)
    store.extend = (key, token, o) => {
      calls.push({ method: 'extend', key, token, options: o });
      return inner.extend(key, token, o);
    };
  return { store, inner, calls };
}

describe('the claim port over a plain DedupStore', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('claims with a token it chose, settles through the held claim, and bounds every call', async () => {
    const { store, calls } = plainStore();
    const claims = claimsOver(store, TERMS);
    expect(claims.sync).toBe(false);
    const first = await claims.claim('k1', deadline());
    if (first.status !== 'claimed') throw new Error(`claimed expected, got ${first.status}`);
    expect(first.token).toBe(calls[0]!.token); // the token the port sent is the one held
    expect(await claims.claim('k1', deadline())).toMatchObject({ status: 'busy' });
    expect(await first.extend!()).toBe(true);
    expect(await first.complete()).toBe(true);
    expect(await claims.claim('k1', deadline())).toEqual({ status: 'duplicate' });
    for (const call of calls) expect(call.options).toMatchObject({ callTimeoutMs: 2_000 });
    expect(calls.map((c) => c.method)).toEqual(['claim', 'claim', 'extend', 'complete', 'claim']);
  });

  it('a release lets the next claim run; a fenced write answers false', async () => {
    const { store } = plainStore();
    const claims = claimsOver(store, TERMS);
    const first = await claims.claim('k2', deadline());
    if (first.status !== 'claimed') throw new Error('claimed expected');
    expect(await first.release()).toBe(true);
    expect(await first.complete()).toBe(false); // no longer its key
    expect(await claims.claim('k2', deadline())).toMatchObject({ status: 'claimed' });
  });

  it('a held claim has extend only when the store has it', async () => {
    const claims = claimsOver(plainStore({ extend: false }).store, TERMS);
    const held = await claims.claim('k3', deadline());
    expect(held.status).toBe('claimed');
    expect('extend' in held && held.extend).toBeFalsy();
  });

  it('a claim stalled past the deadline fails and is abandoned: its late run holds no lease', async () => {
    const { store, inner, calls } = plainStore();
    const stalled = deferred();
    const late = deferred<unknown>();
    const claim = store.claim;
    let first = true;
    store.claim = async (key, options) => {
      if (!first) return claim(key, options);
      first = false;
      await stalled.promise; // the store is stalled; the claim runs when it resumes
      const answer = await claim(key, options);
      late.resolve(answer);
      return answer;
    };
    const claims = claimsOver(store, TERMS);
    const window = deadline();
    const answer = claims.claim('k4', window);
    window.pass();
    expect(await answer).toMatchObject({
      status: 'failed',
      error: expect.objectContaining({ code: 'store_unavailable' }),
    });
    await vi.waitFor(() => expect(calls.map((c) => c.method)).toContain('abandon'));
    const abandoned = calls.find((c) => c.method === 'abandon')!;
    stalled.resolve(); // the stalled claim runs now, after its abandon: a no-op
    expect(await late.promise).toMatchObject({ status: 'in_progress' });
    expect(calls.find((c) => c.method === 'claim')!.token).toBe(abandoned.token);
    expect(await claims.claim('k4', deadline())).toMatchObject({ status: 'claimed' });
    expect(inner.size).toBe(1);
  });

  it('a failed claim is abandoned with retries until it settled twice, then stops', async () => {
    vi.useFakeTimers();
    const { store, calls } = plainStore();
    store.claim = async () => {
      throw new Error('connection reset');
    };
    const claims = claimsOver(store, TERMS);
    expect(await claims.claim('k5', deadline())).toMatchObject({ status: 'failed' });
    await vi.advanceTimersByTimeAsync(60_000);
    // Settled at once, confirmed 500 ms later, then no more.
    expect(calls.filter((c) => c.method === 'abandon')).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a store without abandon gets a claim answered after the deadline released', async () => {
    const { store, calls } = plainStore({ abandon: false });
    const stalled = deferred();
    const claim = store.claim;
    store.claim = async (key, options) => {
      await stalled.promise;
      return claim(key, options);
    };
    const claims = claimsOver(store, TERMS);
    const window = deadline();
    const answer = claims.claim('k6', window);
    window.pass();
    expect(await answer).toMatchObject({ status: 'failed' });
    stalled.resolve();
    await vi.waitFor(() => expect(calls.map((c) => c.method)).toEqual(['claim', 'release']));
    expect(calls[1]!.token).toBe(calls[0]!.token);
  });

  it('a release that failed is abandoned, so the next attempt is not kept waiting for the lease', async () => {
    const { store, calls } = plainStore();
    const claims = claimsOver(store, TERMS);
    const held = await claims.claim('k7', deadline());
    if (held.status !== 'claimed') throw new Error('claimed expected');
    store.release = async () => {
      throw new Error('connection reset');
    };
    expect(await held.release()).toMatchObject({ error: expect.any(Error) });
    await vi.waitFor(() => expect(calls.map((c) => c.method)).toContain('abandon'));
    expect(await claims.claim('k7', deadline())).toMatchObject({ status: 'claimed' });
  });
});
