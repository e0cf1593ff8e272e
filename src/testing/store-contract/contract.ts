import type { DedupStore } from '../../dedup/types.js';
import type { Clock } from '../../shared/clock.js';
import { createVirtualClock } from '../clock/virtual-clock.js';
import { claimed, rejects, same } from './assert.js';
import { abandonChecks, pruneChecks } from './checks-abandon.js';
import { claimChecks, extendChecks } from './checks-claim.js';
import { inputChecks } from './checks-input.js';
import { type Check, LEASE, TTL } from './types.js';

/**
 * Options of {@link storeContract}: how to make the store under test, and what it can do.
 *
 * @example
 * ```ts
 * import type { StoreContractOptions } from '@svc/webhooks/testing';
 * import { createSqliteStore } from '@svc/webhooks/sqlite';
 *
 * const options: StoreContractOptions = {
 *   create: ({ clock }) => createSqliteStore({ path: ':memory:', clock }),
 *   cleanup: (store) => store.close?.(),
 * };
 * ```
 */
export interface StoreContractOptions {
  /**
   * A new, empty store, isolated from every other one made here (its own table, key prefix or
   * database), that reads the time from `clock` only (epoch ms; it moves when a check says so).
   * Called once per check.
   */
  create(context: { clock: Clock }): DedupStore | Promise<DedupStore>;
  /** Undoes `create` after each check, passed or failed (drop the table, close the client). */
  cleanup?(store: DedupStore): unknown;
  /**
   * The optional methods the store does not have: their checks are left out. Default none, so a
   * store without `abandon`, `extend` or `prune` fails their checks with a message that says so.
   */
  without?: readonly ('abandon' | 'extend' | 'prune')[];
  /**
   * A store whose backend cannot be reached (a port nothing listens on, a closed database). Adds a
   * check that every call rejects with `store_unavailable` (503) rather than hanging or resolving.
   */
  unreachable?(): DedupStore | Promise<DedupStore>;
  /**
   * Makes the backend of `store` stop answering (a lock held by another connection, a paused server)
   * and resolves once it has; the function it resolves with lets it answer again. Adds a check that a
   * call made with `callTimeoutMs` rejects with `store_unavailable` during the stall, that a claim it cut
   * short can be abandoned, and that the store answers once the stall ends.
   */
  stall?(store: DedupStore): Promise<() => unknown>;
}

const stallCheck = (stall: NonNullable<StoreContractOptions['stall']>): Check => ({
  name: 'a call bounded by callTimeoutMs fails with store_unavailable during a stall; the store answers after it',
  async run({ store }) {
    const resume = await stall(store);
    try {
      const cut = store.claim('stalled', { leaseMs: LEASE, token: 'stalled-claim', callTimeoutMs: 100 });
      await rejects(cut, 'store_unavailable', 'claim with callTimeoutMs 100 during the stall', 503);
      // A token no claim holds: should the backend run it after the stall, it changes nothing.
      await rejects(
        store.complete('stalled-other', 'no-claim-holds-this', { ttlMs: TTL, callTimeoutMs: 100 }),
        'store_unavailable',
        'complete with callTimeoutMs 100 during the stall',
      );
    } finally {
      await resume();
    }
    // The cut-short claim may still run once the backend answers: abandon makes it harmless.
    if (store.abandon) {
      same(
        await store.abandon('stalled', 'stalled-claim', { leaseMs: LEASE }),
        true,
        'abandon of the cut claim',
      );
      claimed(await store.claim('stalled', { leaseMs: LEASE }), 'claim of its key after the stall');
    }
    claimed(await store.claim('after-stall', { leaseMs: LEASE }), 'claim of a new key after the stall');
  },
});

const unreachableCheck = (unreachable: NonNullable<StoreContractOptions['unreachable']>) => ({
  name: 'fails with store_unavailable (503) when the backend is unreachable',
  async run(): Promise<void> {
    const store = await unreachable();
    await rejects(store.claim('k', { leaseMs: LEASE }), 'store_unavailable', 'claim', 503);
    await rejects(store.complete('k', 'tok', { ttlMs: TTL }), 'store_unavailable', 'complete', 503);
    await rejects(store.release('k', 'tok'), 'store_unavailable', 'release', 503);
    if (store.abandon)
      await rejects(store.abandon('k', 'tok', { leaseMs: LEASE }), 'store_unavailable', 'abandon');
    if (store.extend)
      await rejects(store.extend('k', 'tok', { leaseMs: LEASE }), 'store_unavailable', 'extend');
  },
});

/**
 * The {@link DedupStore} contract every shipped store passes, for your own store: atomic claims,
 * leases and takeover, fencing, the completed record's ttl, caller-chosen tokens, abandon in either
 * order, prune, key bounds, argument errors and, when you say how, timeouts and an unreachable
 * backend. Returns named checks for any test runner: each `run()` makes a store with `create` on a
 * clock of its own (no check waits), throws an `Error` that names the difference, and calls `cleanup`.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'; // or node:test, bun:test, jest, mocha
 * import { createSqliteStore } from '@svc/webhooks/sqlite';
 * import { storeContract } from '@svc/webhooks/testing';
 *
 * describe('my dedup store', () => {
 *   for (const check of storeContract({
 *     create: ({ clock }) => createSqliteStore({ path: ':memory:', clock }),
 *     cleanup: (store) => store.close?.(),
 *   })) {
 *     it(check.name, check.run);
 *   }
 * });
 * ```
 */
export function storeContract(options: StoreContractOptions): { name: string; run(): Promise<void> }[] {
  const { create, cleanup, without = [], unreachable, stall } = options;
  if (typeof create !== 'function') throw new TypeError('storeContract: `create` must be a function.');
  const checks: Check[] = [
    ...claimChecks,
    ...extendChecks.map((check) => ({ ...check, needs: 'extend' as const })),
    ...abandonChecks.map((check) => ({ ...check, needs: 'abandon' as const })),
    ...pruneChecks.map((check) => ({ ...check, needs: 'prune' as const })),
    ...inputChecks,
    ...(stall ? [stallCheck(stall)] : []),
  ].filter((check) => !check.needs || !without.includes(check.needs));
  const runs = checks.map((check) => ({
    name: check.name,
    async run(): Promise<void> {
      // It stands still until a check moves it; it starts at real time, so a backend's own absolute
      // expiry stays in the future.
      const clock = createVirtualClock();
      const store = await create({ clock: { now: clock.now } });
      try {
        if (check.needs && typeof store[check.needs] !== 'function') {
          throw new Error(
            `the store has no ${check.needs}(): implement it, or leave its checks out with \`without: ['${check.needs}']\``,
          );
        }
        await check.run({ store, clock });
      } finally {
        await cleanup?.(store);
      }
    },
  }));
  if (unreachable) runs.push(unreachableCheck(unreachable));
  return runs;
}
