/**
 * The contract's checks of abandon (a claim whose answer was lost, in either order) and prune.
 */
import { claimed, same } from './assert.js';
import { type Check, LEASE, TTL } from './types.js';

export const abandonChecks: Check[] = [
  {
    name: 'abandon after the claim ran drops its lease; the next claim runs',
    async run({ store }) {
      const abandon = store.abandon!.bind(store);
      const first = claimed(await store.claim('k', { leaseMs: LEASE, token: 'lost-answer' }), 'claim');
      same(await abandon('k', first.token, { leaseMs: LEASE }), true, 'abandon of a held claim');
      same(
        await store.complete('k', first.token, { ttlMs: TTL }),
        false,
        'complete with the abandoned token',
      );
      same(await store.release('k', first.token), false, 'release with the abandoned token');
      const retry = claimed(await store.claim('k', { leaseMs: LEASE }), 'the next claim');
      same(await store.complete('k', retry.token, { ttlMs: TTL }), true, 'complete by the next claim');
      same(await store.claim('k', { leaseMs: LEASE }), { status: 'completed' }, 'claim after complete');
    },
  },
  {
    name: 'abandon before the claim runs makes that claim a no-op, and leaves the key free for others',
    async run({ store, clock }) {
      const abandon = store.abandon!.bind(store);
      same(await abandon('k', 'queued-claim', { leaseMs: LEASE }), true, 'abandon of a free key');
      same(
        await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' }),
        { status: 'in_progress', leaseEndsAt: clock.now() },
        'the abandoned claim arriving late',
      );
      same(
        await store.complete('k', 'queued-claim', { ttlMs: TTL }),
        false,
        'complete with the abandoned token',
      );
      await clock.advance(LEASE - 1);
      await store.prune?.();
      same(
        (await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' })).status,
        'in_progress',
        'the abandoned claim 1 ms before its lease would have ended, after a prune',
      );
      const retry = claimed(await store.claim('k', { leaseMs: LEASE }), 'a claim with another token');
      same(
        await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' }),
        { status: 'in_progress', leaseEndsAt: retry.leaseEndsAt },
        'the abandoned claim while another holds the key',
      );
      same(await store.complete('k', retry.token, { ttlMs: TTL }), true, 'complete by the other claim');
      same(
        await store.claim('k', { leaseMs: LEASE, token: 'queued-claim' }),
        { status: 'completed' },
        'the abandoned claim after complete',
      );
    },
  },
  {
    name: "abandon leaves another token's lease and a completed record alone",
    async run({ store }) {
      const abandon = store.abandon!.bind(store);
      const owner = claimed(await store.claim('held', { leaseMs: LEASE }), 'claim');
      same(await abandon('held', 'other-token', { leaseMs: LEASE }), false, "abandon during another's lease");
      same(
        await store.claim('held', { leaseMs: LEASE }),
        { status: 'in_progress', leaseEndsAt: owner.leaseEndsAt },
        "claim after abandon of another's lease",
      );
      same(await store.complete('held', owner.token, { ttlMs: TTL }), true, 'complete by the owner');
      same(await abandon('held', 'other-token', { leaseMs: LEASE }), true, 'abandon of a completed key');
      same(
        await abandon('held', owner.token, { leaseMs: LEASE }),
        true,
        "abandon of the owner's completed key",
      );
      same(
        await store.claim('held', { leaseMs: LEASE, token: 'other-token' }),
        { status: 'completed' },
        'claim after those abandons',
      );
    },
  },
  {
    name: 'abandon of an expired lease marks the key; a marker of another token does not block',
    async run({ store, clock }) {
      const abandon = store.abandon!.bind(store);
      claimed(await store.claim('k', { leaseMs: LEASE, token: 'crashed' }), 'claim');
      await clock.advance(LEASE);
      same(await abandon('k', 'first-lost', { leaseMs: LEASE }), true, 'abandon over an expired lease');
      same(await abandon('k', 'second-lost', { leaseMs: LEASE }), true, 'abandon over a marker');
      same(
        (await store.claim('k', { leaseMs: LEASE, token: 'second-lost' })).status,
        'in_progress',
        'the claim of the last abandoned token',
      );
      claimed(await store.claim('k', { leaseMs: LEASE, token: 'fresh' }), 'a claim with a fresh token');
    },
  },
];

export const pruneChecks: Check[] = [
  {
    name: 'prunes expired claims and completed records, keeping live ones',
    async run({ store, clock }) {
      const prune = store.prune!.bind(store);
      claimed(await store.claim('expired-claim', { leaseMs: 1_000 }), 'claim');
      const done = claimed(await store.claim('expired-done', { leaseMs: LEASE }), 'claim');
      await store.complete('expired-done', done.token, { ttlMs: 1_000 });
      claimed(await store.claim('live-claim', { leaseMs: LEASE }), 'claim');
      const live = claimed(await store.claim('live-done', { leaseMs: LEASE }), 'claim');
      await store.complete('live-done', live.token, { ttlMs: TTL });
      await clock.advance(1_000);
      same(await prune(), 2, 'records pruned');
      same(await prune(), 0, 'records pruned by a second prune');
      same(
        (await store.claim('live-claim', { leaseMs: LEASE })).status,
        'in_progress',
        'live claim after prune',
      );
      same(
        await store.claim('live-done', { leaseMs: LEASE }),
        { status: 'completed' },
        'live record after prune',
      );
      claimed(await store.claim('expired-done', { leaseMs: LEASE }), 'claim of a pruned key');
    },
  },
];
