/**
 * The receiver's claim when its answer is lost (src/core/claims.ts): the claim is abandoned with the token the receiver
 * chose, so the sender's retry runs the handler. The stores here are stores of the kind a user could
 * write, around a real memory store, that lose or hold back answers on purpose; the shipped stores
 * under real stalls are in test/receivers/store-stall.test.ts.
 */
import { type ClaimResult, createCrmReceiver, createMemoryStore, type DedupStore } from '@svc/webhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaimOptions } from '../../src/dedup/types.js';
import { CRM_SECRET, crmDelivery, deferred, deliver } from '../receivers/support.js';

/** A store whose claims run on `inner` but whose first answer is lost (the claim did run). */
function losingFirstAnswer(withAbandon: boolean): DedupStore & { abandoned: string[] } {
  const inner = createMemoryStore();
  let lost = false;
  const abandoned: string[] = [];
  return {
    abandoned,
    async claim(key: string, options: ClaimOptions): Promise<ClaimResult> {
      const result = await inner.claim(key, options);
      if (lost) return result;
      lost = true;
      throw new Error('connection reset while reading the answer');
    },
    complete: (key, token, options) => inner.complete(key, token, options),
    release: (key, token) => inner.release(key, token),
    ...(withAbandon && {
      abandon: (key: string, token: string, options: { leaseMs: number }) => {
        abandoned.push(token);
        return inner.abandon(key, token, options);
      },
    }),
  };
}

function crmReceiver(dedup: DedupStore, options: { timeoutMs?: number; leaseMs?: number } = {}) {
  const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup, ...options });
  const runs: string[] = [];
  receiver.on('deal.won', (event) => {
    runs.push(event.deliveryId);
  });
  return { receiver, runs };
}

describe('claims whose answer was not seen', () => {
  it('a claim that ran but whose answer was lost is abandoned: the retry runs the handler once', async () => {
    const store = losingFirstAnswer(true);
    const { receiver, runs } = crmReceiver(store);
    const delivery = crmDelivery('deal.won');
    expect((await deliver(receiver, delivery)).status).toBe(503);
    expect(store.abandoned).toHaveLength(1);
    expect((await deliver(receiver, delivery)).status).toBe(200);
    expect((await deliver(receiver, delivery)).kind).toBe('duplicate');
    expect(runs).toEqual([delivery.deliveryId]);
  });

  it('a claim that reaches the store after its abandon does nothing', async () => {
    const inner = createMemoryStore();
    const held = deferred();
    let first = true;
    const store: DedupStore = {
      async claim(key, options) {
        if (!first) return inner.claim(key, options);
        first = false;
        await held.promise; // stalled: the receiver gives up and abandons meanwhile
        await inner.claim(key, options); // runs after its abandon, and its answer is lost too
        throw new Error('connection reset');
      },
      complete: (key, token, options) => inner.complete(key, token, options),
      release: (key, token) => inner.release(key, token),
      abandon: (key, token, options) => inner.abandon(key, token, options),
    };
    // The store ignores the call's bound: the delivery's deadline is the last one.
    const { receiver, runs } = crmReceiver(store, { timeoutMs: 50, leaseMs: 1_000 });
    const delivery = crmDelivery('deal.won');
    expect((await deliver(receiver, delivery)).status).toBe(503);
    held.resolve(); // the stalled claim runs now, after its abandon
    await new Promise((resolve) => setImmediate(resolve));
    expect((await deliver(receiver, delivery)).status).toBe(200);
    expect(runs).toEqual([delivery.deliveryId]);
  });

  it('a store without abandon still gets a late claim released', async () => {
    const inner = createMemoryStore();
    const held = deferred();
    const answered = deferred();
    let first = true;
    const store: DedupStore = {
      async claim(key, options) {
        if (!first) return inner.claim(key, options);
        first = false;
        await held.promise;
        const result = await inner.claim(key, options);
        answered.resolve();
        return result;
      },
      complete: (key, token, options) => inner.complete(key, token, options),
      release: async (key, token) => inner.release(key, token),
    };
    // The store ignores the call's bound: the delivery's deadline is the last one.
    const { receiver, runs } = crmReceiver(store, { timeoutMs: 50, leaseMs: 1_000 });
    const delivery = crmDelivery('deal.won');
    expect((await deliver(receiver, delivery)).status).toBe(503);
    held.resolve();
    await answered.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect((await deliver(receiver, delivery)).status).toBe(200);
    expect(runs).toEqual([delivery.deliveryId]);
  });
});

describe('releases whose answer was not seen', () => {
  it('a failed release after a handler threw is abandoned: the retry runs the handler again', async () => {
    const inner = createMemoryStore();
    let releases = 0;
    const store: DedupStore = {
      claim: (key, options) => inner.claim(key, options),
      complete: (key, token, options) => inner.complete(key, token, options),
      release: async () => {
        releases++;
        throw new Error('connection reset'); // never reached the store
      },
      abandon: (key, token, options) => inner.abandon(key, token, options),
    };
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store });
    let runs = 0;
    receiver.on('deal.won', () => {
      runs++;
      if (runs === 1) throw new Error('handler failed once');
    });
    const delivery = crmDelivery('deal.won');
    expect((await deliver(receiver, delivery)).status).toBe(500);
    expect(releases).toBe(1);
    expect((await deliver(receiver, delivery)).status).toBe(200); // not 409 until the lease ends
    expect(runs).toBe(2);
  });
});

describe('background abandon retries', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function failingClaims(abandon: DedupStore['abandon']): DedupStore & { calls: number } {
    const store = {
      calls: 0,
      claim: async (): Promise<ClaimResult> => {
        throw new Error('no answer');
      },
      complete: async () => false,
      release: async () => false,
      abandon: (key: string, token: string, options: { leaseMs: number }) => {
        store.calls++;
        return abandon!(key, token, options);
      },
    };
    return store;
  }

  it('retry a failing abandon with backoff, stop once the waits reach leaseMs, leave no timer', async () => {
    vi.useFakeTimers();
    const store = failingClaims(async () => {
      throw new Error('still down');
    });
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store, timeoutMs: 500, leaseMs: 1_000 });
    receiver.on('deal.won', () => {});
    expect((await deliver(receiver, crmDelivery('deal.won'))).status).toBe(503);
    await vi.advanceTimersByTimeAsync(60_000);
    // At 0, 250 and 750 ms; the next wait (1 s more) would pass the 1 s lease.
    expect(store.calls).toBe(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('send a settled abandon once more to confirm, then stop', async () => {
    vi.useFakeTimers();
    const store = failingClaims(async () => true);
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store });
    receiver.on('deal.won', () => {});
    expect((await deliver(receiver, crmDelivery('deal.won'))).status).toBe(503);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.calls).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
