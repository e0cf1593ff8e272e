/**
 * The DedupStore contract, run against every shipped store (see *-store.test.ts). Times use an
 * injected manual clock, so lease and TTL expiry are exact and no test waits.
 */
import type { ClaimResult, DedupStore } from '@svc/webhooks';
import { expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../support/clock.js';
import type { StoreKind } from '../support/stores.js';

const LEASE = 30_000;
const TTL = 86_400_000;

function claimed(result: ClaimResult): Extract<ClaimResult, { status: 'claimed' }> {
  if (result.status !== 'claimed') throw new Error(`expected claimed, got ${JSON.stringify(result)}`);
  return result;
}

/** Defines the contract tests for `kind` (call inside its describe). */
export function storeContract(kind: StoreKind): void {
  async function setup(): Promise<{ store: DedupStore; clock: ManualClock }> {
    const clock = createManualClock();
    return { store: await kind.create({ clock }), clock };
  }

  it('claims a free key with a token and lease end, then reports it in progress', async () => {
    const { store, clock } = await setup();
    const first = claimed(await store.claim('mail:delivery:a', { leaseMs: LEASE }));
    expect(first.token).toMatch(/\S{8,}/);
    expect(first.leaseEndsAt).toBe(clock.now() + LEASE);
    expect(await store.claim('mail:delivery:a', { leaseMs: LEASE })).toEqual({
      status: 'in_progress',
      leaseEndsAt: first.leaseEndsAt,
    });
    expect((await store.claim('mail:delivery:b', { leaseMs: LEASE })).status).toBe('claimed');
  });

  it('reports completed after complete, until the ttl ends', async () => {
    const { store, clock } = await setup();
    const { token } = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.complete('k', token, { ttlMs: TTL })).toBe(true);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({ status: 'completed' });
    clock.advance(TTL - 1);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({ status: 'completed' });
    clock.advance(1);
    expect((await store.claim('k', { leaseMs: LEASE })).status).toBe('claimed');
  });

  it('release lets the next claim run again with a new token', async () => {
    const { store } = await setup();
    const first = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.release('k', first.token)).toBe(true);
    const second = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(second.token).not.toBe(first.token);
    expect(await store.release('k', first.token)).toBe(false);
    expect(await store.complete('k', first.token, { ttlMs: TTL })).toBe(false);
    expect(await store.complete('k', second.token, { ttlMs: TTL })).toBe(true);
  });

  it('gives exactly one of 200 concurrent claims of one key', async () => {
    const { store } = await setup();
    const results = await Promise.all(
      Array.from({ length: 200 }, () => store.claim('hot', { leaseMs: LEASE })),
    );
    const winners = results.filter((r) => r.status === 'claimed');
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 'in_progress')).toHaveLength(199);
    const { token } = claimed(winners[0]!);
    await store.complete('hot', token, { ttlMs: TTL });
    const again = await Promise.all(
      Array.from({ length: 200 }, () => store.claim('hot', { leaseMs: LEASE })),
    );
    expect(again.every((r) => r.status === 'completed')).toBe(true);
  });

  it('lets a claim whose lease ended be taken over, and fences the stale worker', async () => {
    const { store, clock } = await setup();
    const stale = claimed(await store.claim('k', { leaseMs: LEASE }));
    clock.advance(LEASE - 1);
    expect((await store.claim('k', { leaseMs: LEASE })).status).toBe('in_progress');
    clock.advance(1);
    const fresh = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(fresh.token).not.toBe(stale.token);
    expect(fresh.leaseEndsAt).toBe(clock.now() + LEASE);
    expect(await store.complete('k', stale.token, { ttlMs: TTL })).toBe(false);
    expect(await store.release('k', stale.token)).toBe(false);
    expect(await store.extend?.('k', stale.token, { leaseMs: LEASE })).not.toBe(true);
    // The new owner's claim is untouched by the refused writes.
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({
      status: 'in_progress',
      leaseEndsAt: fresh.leaseEndsAt,
    });
    expect(await store.complete('k', fresh.token, { ttlMs: TTL })).toBe(true);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({ status: 'completed' });
  });

  it('refuses writes after the lease ended even if nobody took over', async () => {
    const { store, clock } = await setup();
    const { token } = claimed(await store.claim('k', { leaseMs: LEASE }));
    clock.advance(LEASE);
    expect(await store.complete('k', token, { ttlMs: TTL })).toBe(false);
    expect(await store.release('k', token)).toBe(false);
    expect((await store.claim('k', { leaseMs: LEASE })).status).toBe('claimed');
  });

  it('refuses a wrong token and changes nothing', async () => {
    const { store } = await setup();
    const owner = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.complete('k', `${owner.token}x`, { ttlMs: TTL })).toBe(false);
    expect(await store.release('k', 'not-a-token')).toBe(false);
    expect(await store.complete('other', owner.token, { ttlMs: TTL })).toBe(false);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({
      status: 'in_progress',
      leaseEndsAt: owner.leaseEndsAt,
    });
  });

  it('keeps a completed record when its token releases, extends or completes again', async () => {
    const { store, clock } = await setup();
    const { token } = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.complete('k', token, { ttlMs: TTL })).toBe(true);
    expect(await store.release('k', token)).toBe(false);
    expect(await store.extend?.('k', token, { leaseMs: LEASE })).not.toBe(true);
    expect(await store.complete('k', token, { ttlMs: 1 })).toBe(false);
    clock.advance(LEASE * 2);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({ status: 'completed' });
  });

  it('extends a held lease (every shipped store has extend: receivers keep leases while handlers run)', async () => {
    const { store, clock } = await setup();
    expect(typeof store.extend).toBe('function');
    if (!store.extend) return;
    const { token } = claimed(await store.claim('k', { leaseMs: LEASE }));
    clock.advance(LEASE - 1_000);
    expect(await store.extend('k', token, { leaseMs: LEASE })).toBe(true);
    clock.advance(LEASE - 1);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({
      status: 'in_progress',
      leaseEndsAt: clock.now() + 1,
    });
    expect(await store.complete('k', token, { ttlMs: TTL })).toBe(true);
  });

  it('refuses to extend a lapsed lease or with another token, and changes nothing', async () => {
    const { store, clock } = await setup();
    if (!store.extend) return expect(typeof store.extend).toBe('function');
    const owner = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.extend('k', `${owner.token}x`, { leaseMs: LEASE * 10 })).toBe(false);
    expect(await store.extend('other', owner.token, { leaseMs: LEASE })).toBe(false);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({
      status: 'in_progress',
      leaseEndsAt: owner.leaseEndsAt,
    });
    clock.advance(LEASE);
    // The lease ended, nobody took over yet: too late to extend, the key is free.
    expect(await store.extend('k', owner.token, { leaseMs: LEASE })).toBe(false);
    const next = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.extend('k', owner.token, { leaseMs: LEASE })).toBe(false);
    expect(await store.complete('k', next.token, { ttlMs: TTL })).toBe(true);
  });

  it('uses a token the caller supplies', async () => {
    const { store } = await setup();
    const result = claimed(await store.claim('k', { leaseMs: LEASE, token: 'caller-token-1' }));
    expect(result.token).toBe('caller-token-1');
    expect(await store.complete('k', 'caller-token-1', { ttlMs: TTL })).toBe(true);
    expect(await store.claim('k', { leaseMs: LEASE, token: 'caller-token-2' })).toEqual({
      status: 'completed',
    });
  });

  it('answers a repeated claim with its own token (a client resending it) with the same lease', async () => {
    const { store, clock } = await setup();
    const first = claimed(await store.claim('k', { leaseMs: LEASE, token: 'sent-twice' }));
    clock.advance(1_000);
    expect(await store.claim('k', { leaseMs: LEASE, token: 'sent-twice' })).toEqual(first);
    expect((await store.claim('k', { leaseMs: LEASE })).status).toBe('in_progress');
    expect(await store.complete('k', 'sent-twice', { ttlMs: TTL })).toBe(true);
    expect(await store.claim('k', { leaseMs: LEASE, token: 'sent-twice' })).toEqual({ status: 'completed' });
  });

  it('abandon after the claim ran drops its lease; the next claim runs', async () => {
    const { store } = await setup();
    if (!store.abandon) return expect(kind.name).toBe('custom');
    const first = claimed(await store.claim('k', { leaseMs: LEASE, token: 'lost-answer' }));
    expect(await store.abandon('k', first.token, { leaseMs: LEASE })).toBe(true);
    expect(await store.complete('k', first.token, { ttlMs: TTL })).toBe(false);
    expect(await store.release('k', first.token)).toBe(false);
    const retry = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.complete('k', retry.token, { ttlMs: TTL })).toBe(true);
    expect(await store.claim('k', { leaseMs: LEASE })).toEqual({ status: 'completed' });
  });

  it('abandon before the claim runs makes that claim a no-op, and leaves the key free for others', async () => {
    const { store, clock } = await setup();
    if (!store.abandon) return expect(kind.name).toBe('custom');
    expect(await store.abandon('k', 'queued-claim', { leaseMs: LEASE })).toBe(true);
    // The abandoned claim arrives late: it must not take the key.
    const late = await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' });
    expect(late).toEqual({ status: 'in_progress', leaseEndsAt: clock.now() });
    expect(await store.complete('k', 'queued-claim', { ttlMs: TTL })).toBe(false);
    // Still remembered until the lease it stood for would have ended, prune or not.
    clock.advance(LEASE - 1);
    await store.prune?.();
    expect((await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' })).status).toBe('in_progress');
    // Every other claimer finds the key free.
    const retry = claimed(await store.claim('k', { leaseMs: LEASE }));
    expect(await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' })).toEqual({
      status: 'in_progress',
      leaseEndsAt: retry.leaseEndsAt,
    });
    expect(await store.complete('k', retry.token, { ttlMs: TTL })).toBe(true);
    expect(await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' })).toEqual({
      status: 'completed',
    });
  });

  it("abandon leaves another token's lease and a completed record alone", async () => {
    const { store } = await setup();
    if (!store.abandon) return expect(kind.name).toBe('custom');
    const owner = claimed(await store.claim('held', { leaseMs: LEASE }));
    // Not settled: the abandoned claim could still take the key once this lease is gone.
    expect(await store.abandon('held', 'other-token', { leaseMs: LEASE })).toBe(false);
    expect(await store.claim('held', { leaseMs: LEASE })).toEqual({
      status: 'in_progress',
      leaseEndsAt: owner.leaseEndsAt,
    });
    expect(await store.complete('held', owner.token, { ttlMs: TTL })).toBe(true);
    expect(await store.abandon('held', 'other-token', { leaseMs: LEASE })).toBe(true);
    expect(await store.abandon('held', owner.token, { leaseMs: LEASE })).toBe(true);
    expect(await store.claim('held', { leaseMs: LEASE, token: 'other-token' })).toEqual({
      status: 'completed',
    });
  });

  it('abandon of an expired lease marks the key; a marker of another token does not block', async () => {
    const { store, clock } = await setup();
    if (!store.abandon) return expect(kind.name).toBe('custom');
    claimed(await store.claim('k', { leaseMs: LEASE, token: 'crashed' }));
    clock.advance(LEASE);
    expect(await store.abandon('k', 'first-lost', { leaseMs: LEASE })).toBe(true);
    expect(await store.abandon('k', 'second-lost', { leaseMs: LEASE })).toBe(true);
    expect((await store.claim('k', { leaseMs: LEASE, token: 'second-lost' })).status).toBe('in_progress');
    expect((await store.claim('k', { leaseMs: LEASE, token: 'fresh' })).status).toBe('claimed');
  });

  it('prunes expired claims and completed records, keeping live ones', async () => {
    const { store, clock } = await setup();
    // Redis and DynamoDB (its TTL) expire records by themselves
    if (!store.prune) return expect(kind.name).toMatch(/^(redis|dynamodb)/);
    claimed(await store.claim('expired-claim', { leaseMs: 1_000 }));
    const done = claimed(await store.claim('expired-done', { leaseMs: LEASE }));
    await store.complete('expired-done', done.token, { ttlMs: 1_000 });
    claimed(await store.claim('live-claim', { leaseMs: LEASE }));
    const live = claimed(await store.claim('live-done', { leaseMs: LEASE }));
    await store.complete('live-done', live.token, { ttlMs: TTL });
    clock.advance(1_000);
    expect(await store.prune()).toBe(2);
    expect(await store.prune()).toBe(0);
    expect(await store.claim('live-claim', { leaseMs: LEASE })).toMatchObject({ status: 'in_progress' });
    expect(await store.claim('live-done', { leaseMs: LEASE })).toEqual({ status: 'completed' });
    expect((await store.claim('expired-done', { leaseMs: LEASE })).status).toBe('claimed');
  });

  it('keeps keys apart, whatever characters they hold', async () => {
    const { store } = await setup();
    const keys = [
      'mail:msg:<a@b>:delivered',
      'crm:delivery:ü-ß-✓',
      `x${'y'.repeat(500)}`,
      "it's; drop",
      'a b\nc',
    ];
    for (const key of keys) claimed(await store.claim(key, { leaseMs: LEASE }));
    for (const key of keys) expect((await store.claim(key, { leaseMs: LEASE })).status).toBe('in_progress');
  });

  it('rejects bad arguments with options_invalid', async () => {
    const { store } = await setup();
    await expect(store.claim('', { leaseMs: LEASE })).rejects.toMatchObject({
      code: 'options_invalid',
      status: 500,
    });
    await expect(store.claim('k', { leaseMs: 0 })).rejects.toMatchObject({ code: 'options_invalid' });
    await expect(store.claim('k', { leaseMs: 1.5 })).rejects.toMatchObject({ code: 'options_invalid' });
    await expect(store.complete('k', 'tok', { ttlMs: -1 })).rejects.toMatchObject({
      code: 'options_invalid',
    });
    await expect(store.release('k', '')).rejects.toMatchObject({ code: 'options_invalid' });
    await expect(store.claim('k', { leaseMs: LEASE, token: '' })).rejects.toMatchObject({
      code: 'options_invalid',
    });
    await expect(store.abandon?.('k', '', { leaseMs: LEASE })).rejects.toMatchObject({
      code: 'options_invalid',
    });
  });

  // Only stores with a backend to lose (not the in-process memory store).
  const createUnreachable = kind.createUnreachable;
  if (createUnreachable) {
    it('fails with store_unavailable (503) when the backend is unreachable', async () => {
      const store = await createUnreachable();
      const error = await store.claim('k', { leaseMs: LEASE }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'WebhookError', code: 'store_unavailable', status: 503 });
      await expect(store.complete('k', 'tok', { ttlMs: TTL })).rejects.toMatchObject({
        code: 'store_unavailable',
      });
      await expect(store.release('k', 'tok')).rejects.toMatchObject({ code: 'store_unavailable' });
      await expect(store.abandon?.('k', 'tok', { leaseMs: LEASE })).rejects.toMatchObject({
        code: 'store_unavailable',
      });
    });
  }
}
