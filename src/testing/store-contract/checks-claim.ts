/**
 * The contract's checks of claim, complete, release and extend: atomicity, leases and takeover,
 * fencing, the completed record's ttl, caller-chosen tokens. Time moves only by `clock.advance`.
 */
import { claimed, ok, same } from './assert.js';
import { type Check, LEASE, TTL } from './types.js';

export const claimChecks: Check[] = [
  {
    name: 'claims a free key with a token and a lease end, then reports it in progress',
    async run({ store, clock }) {
      const first = claimed(await store.claim('mail:delivery:a', { leaseMs: LEASE }), 'first claim');
      ok(
        typeof first.token === 'string' && first.token.length >= 8,
        'token: a string of 8+ characters',
        first,
      );
      same(first.leaseEndsAt, clock.now() + LEASE, 'leaseEndsAt of the first claim (now + leaseMs)');
      same(
        await store.claim('mail:delivery:a', { leaseMs: LEASE }),
        { status: 'in_progress', leaseEndsAt: first.leaseEndsAt },
        'second claim of the held key',
      );
      claimed(await store.claim('mail:delivery:b', { leaseMs: LEASE }), 'claim of another key');
    },
  },
  {
    name: 'reports completed after complete, until the ttl ends',
    async run({ store, clock }) {
      const { token } = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim');
      same(await store.complete('k', token, { ttlMs: TTL }), true, 'complete by the owner');
      same(await store.claim('k', { leaseMs: LEASE }), { status: 'completed' }, 'claim after complete');
      await clock.advance(TTL - 1);
      same(
        await store.claim('k', { leaseMs: LEASE }),
        { status: 'completed' },
        'claim 1 ms before the ttl ends',
      );
      await clock.advance(1);
      claimed(await store.claim('k', { leaseMs: LEASE }), 'claim once the ttl ended');
    },
  },
  {
    name: 'release lets the next claim run again with a new token',
    async run({ store }) {
      const first = claimed(await store.claim('k', { leaseMs: LEASE }), 'first claim');
      same(await store.release('k', first.token), true, 'release by the owner');
      const second = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim after release');
      ok(second.token !== first.token, 'the claim after a release gets a new token', second);
      same(await store.release('k', first.token), false, 'release with the released token');
      same(await store.complete('k', first.token, { ttlMs: TTL }), false, 'complete with the released token');
      same(await store.complete('k', second.token, { ttlMs: TTL }), true, 'complete by the new owner');
    },
  },
  {
    name: 'gives exactly one of 200 concurrent claims of one key',
    async run({ store }) {
      const claims = () =>
        Promise.all(Array.from({ length: 200 }, () => store.claim('hot', { leaseMs: LEASE })));
      const results = await claims();
      const winners = results.filter((r) => r.status === 'claimed');
      same(winners.length, 1, 'claims answered claimed');
      same(results.filter((r) => r.status === 'in_progress').length, 199, 'claims answered in_progress');
      same(
        await store.complete('hot', claimed(winners[0]!, 'winner').token, { ttlMs: TTL }),
        true,
        'complete',
      );
      ok(
        (await claims()).every((r) => r.status === 'completed'),
        '200 claims after complete: all completed',
      );
    },
  },
  {
    name: 'lets a claim whose lease ended be taken over, and fences the stale owner',
    async run({ store, clock }) {
      const stale = claimed(await store.claim('k', { leaseMs: LEASE }), 'first claim');
      await clock.advance(LEASE - 1);
      same(
        (await store.claim('k', { leaseMs: LEASE })).status,
        'in_progress',
        'claim 1 ms before the lease ends',
      );
      await clock.advance(1);
      const fresh = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim once the lease ended');
      ok(fresh.token !== stale.token, 'the takeover gets a new token', fresh);
      same(fresh.leaseEndsAt, clock.now() + LEASE, 'leaseEndsAt of the takeover');
      same(await store.complete('k', stale.token, { ttlMs: TTL }), false, 'complete by the stale owner');
      same(await store.release('k', stale.token), false, 'release by the stale owner');
      ok(
        (await store.extend?.('k', stale.token, { leaseMs: LEASE })) !== true,
        'extend by the stale owner refused',
      );
      same(
        await store.claim('k', { leaseMs: LEASE }),
        { status: 'in_progress', leaseEndsAt: fresh.leaseEndsAt },
        "the new owner's claim after the refused writes",
      );
      same(await store.complete('k', fresh.token, { ttlMs: TTL }), true, 'complete by the new owner');
      same(await store.claim('k', { leaseMs: LEASE }), { status: 'completed' }, 'claim after complete');
    },
  },
  {
    name: 'refuses writes after the lease ended even if nobody took over',
    async run({ store, clock }) {
      const { token } = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim');
      await clock.advance(LEASE);
      same(await store.complete('k', token, { ttlMs: TTL }), false, 'complete after the lease ended');
      same(await store.release('k', token), false, 'release after the lease ended');
      claimed(await store.claim('k', { leaseMs: LEASE }), 'claim after the lease ended');
    },
  },
  {
    name: 'refuses a wrong token and changes nothing',
    async run({ store }) {
      const owner = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim');
      same(
        await store.complete('k', `${owner.token}x`, { ttlMs: TTL }),
        false,
        'complete with a wrong token',
      );
      same(await store.release('k', 'not-a-token'), false, 'release with a wrong token');
      same(await store.complete('other', owner.token, { ttlMs: TTL }), false, 'complete of another key');
      same(
        await store.claim('k', { leaseMs: LEASE }),
        { status: 'in_progress', leaseEndsAt: owner.leaseEndsAt },
        'claim after the refused writes',
      );
    },
  },
  {
    name: 'keeps a completed record when its token releases, extends or completes again',
    async run({ store, clock }) {
      const { token } = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim');
      same(await store.complete('k', token, { ttlMs: TTL }), true, 'complete');
      same(await store.release('k', token), false, 'release of a completed record');
      ok(
        (await store.extend?.('k', token, { leaseMs: LEASE })) !== true,
        'extend of a completed record refused',
      );
      same(await store.complete('k', token, { ttlMs: 1 }), false, 'a second complete');
      await clock.advance(LEASE * 2);
      same(await store.claim('k', { leaseMs: LEASE }), { status: 'completed' }, 'claim after those writes');
    },
  },
  {
    name: 'uses a token the caller supplies',
    async run({ store }) {
      const result = claimed(await store.claim('k', { leaseMs: LEASE, token: 'caller-token-1' }), 'claim');
      same(result.token, 'caller-token-1', 'token of a claim made with one');
      same(await store.complete('k', 'caller-token-1', { ttlMs: TTL }), true, 'complete with that token');
      same(
        await store.claim('k', { leaseMs: LEASE, token: 'caller-token-2' }),
        { status: 'completed' },
        'claim with another token after complete',
      );
    },
  },
  {
    name: 'answers a repeated claim with its own token (a client resending it) with the same lease',
    async run({ store, clock }) {
      const first = claimed(await store.claim('k', { leaseMs: LEASE, token: 'sent-twice' }), 'claim');
      await clock.advance(1_000);
      same(await store.claim('k', { leaseMs: LEASE, token: 'sent-twice' }), first, 'the same claim again');
      same((await store.claim('k', { leaseMs: LEASE })).status, 'in_progress', 'a claim with another token');
      same(await store.complete('k', 'sent-twice', { ttlMs: TTL }), true, 'complete');
      same(
        await store.claim('k', { leaseMs: LEASE, token: 'sent-twice' }),
        { status: 'completed' },
        'the same claim after complete',
      );
    },
  },
];

export const extendChecks: Check[] = [
  {
    name: 'extends a held lease',
    async run({ store, clock }) {
      const { token } = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim');
      await clock.advance(LEASE - 1_000);
      same(await store.extend!('k', token, { leaseMs: LEASE }), true, 'extend by the owner');
      await clock.advance(LEASE - 1);
      same(
        await store.claim('k', { leaseMs: LEASE }),
        { status: 'in_progress', leaseEndsAt: clock.now() + 1 },
        'claim 1 ms before the extended lease ends',
      );
      same(await store.complete('k', token, { ttlMs: TTL }), true, 'complete within the extended lease');
    },
  },
  {
    name: 'refuses to extend a lapsed lease or with another token, and changes nothing',
    async run({ store, clock }) {
      const extend = store.extend!.bind(store);
      const owner = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim');
      same(await extend('k', `${owner.token}x`, { leaseMs: LEASE * 10 }), false, 'extend with a wrong token');
      same(await extend('other', owner.token, { leaseMs: LEASE }), false, 'extend of another key');
      same(
        await store.claim('k', { leaseMs: LEASE }),
        { status: 'in_progress', leaseEndsAt: owner.leaseEndsAt },
        'claim after the refused extends',
      );
      await clock.advance(LEASE);
      same(await extend('k', owner.token, { leaseMs: LEASE }), false, 'extend once the lease ended');
      const next = claimed(await store.claim('k', { leaseMs: LEASE }), 'claim once the lease ended');
      same(
        await extend('k', owner.token, { leaseMs: LEASE }),
        false,
        'extend by the old owner after a takeover',
      );
      same(await store.complete('k', next.token, { ttlMs: TTL }), true, 'complete by the new owner');
    },
  },
];
