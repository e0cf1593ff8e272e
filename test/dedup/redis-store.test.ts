import { createCrmReceiver, WebhookError } from '@svc/webhooks';
import { createRedisStore } from '@svc/webhooks/redis';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { forEachStore } from '../support/stores.js';
import { storeContract } from './contract.js';

forEachStore(storeContract, ['redis-ioredis', 'redis-node-redis']);

/** How many commands of each name the server ran since the last RESETSTAT. */
async function commandCalls(redis: Redis): Promise<{ set: number; scripts: number }> {
  const info = await redis.info('commandstats');
  const count = (name: string) => Number(info.match(new RegExp(`cmdstat_${name}:calls=(\\d+)`))?.[1] ?? 0);
  return { set: count('set'), scripts: count('evalsha') + count('eval') };
}

forEachStore(
  (kind) => {
    describe('redis specifics', () => {
      it('claims a free key with one SET NX (no script), completes with one script, judges a taken key with one script', async () => {
        const store = await kind.create({ clock: createManualClock() });
        // Warm-up: the first use of each script on a server costs one NOSCRIPT answer and an EVAL.
        const warm = await store.claim('warm', { leaseMs: 1_000 });
        if (warm.status === 'claimed') await store.complete('warm', warm.token, { ttlMs: 1_000 });
        await store.claim('warm', { leaseMs: 1_000 });
        const redis = kind.client as Redis;
        await redis.config('RESETSTAT');
        const result = await store.claim('k', { leaseMs: 1_000 });
        const afterClaim = await commandCalls(redis);
        if (result.status !== 'claimed') throw new Error('not claimed');
        await store.complete('k', result.token, { ttlMs: 1_000 });
        const afterComplete = await commandCalls(redis);
        expect(await store.claim('k', { leaseMs: 1_000 })).toEqual({ status: 'completed' });
        // The counts include the commands a script runs: the complete script's own SET.
        expect([afterClaim, afterComplete, await commandCalls(redis)]).toEqual([
          { set: 1, scripts: 0 },
          { set: 2, scripts: 1 },
          { set: 3, scripts: 2 },
        ]);
      });

      it('claims with the script alone through a client that has no `set`', async () => {
        const redis = kind.client as Redis;
        const scriptsOnly = {
          evalsha: (sha1: string, keys: number, ...args: string[]) => redis.evalsha(sha1, keys, ...args),
          eval: (script: string, keys: number, ...args: string[]) => redis.eval(script, keys, ...args),
        };
        const store = createRedisStore({ client: scriptsOnly, prefix: 'svc-test-scripts:' });
        const first = await store.claim('k', { leaseMs: 60_000 });
        if (first.status !== 'claimed') throw new Error('not claimed');
        expect(await redis.get('svc-test-scripts:k')).toBe(`L::${first.token}`);
        const other = await store.claim('k', { leaseMs: 60_000 });
        expect(other.status).toBe('in_progress');
        expect(Math.abs((other as { leaseEndsAt: number }).leaseEndsAt - first.leaseEndsAt)).toBeLessThan(
          1_000,
        );
        expect(await store.complete('k', first.token, { ttlMs: 60_000 })).toBe(true);
        await redis.del('svc-test-scripts:k');
      });

      it('runs its scripts again after SCRIPT FLUSH (NOSCRIPT -> EVAL)', async () => {
        const store = await kind.create({ clock: createManualClock() });
        await (kind.client as Redis).script('FLUSH');
        expect((await store.claim('k', { leaseMs: 1_000 })).status).toBe('claimed');
      });

      it('stores under its prefix with a Redis expiry, and uses server time without a clock', async () => {
        const redis = kind.client as Redis;
        const store = createRedisStore({ client: redis, prefix: 'svc-test:' });
        const before = Date.now();
        const result = await store.claim('server-time', { leaseMs: 60_000 });
        if (result.status !== 'claimed') throw new Error('not claimed');
        // Same machine: the server clock and ours agree to well within a minute.
        expect(Math.abs(result.leaseEndsAt - (before + 60_000))).toBeLessThan(60_000);
        // A fresh claim's lease ends with the key's own expiry (an empty lease end in the value).
        expect(await redis.get('svc-test:server-time')).toBe(`L::${result.token}`);
        expect(await redis.pttl('svc-test:server-time')).toBeGreaterThan(59_000);
        // Another claimer reads that lease end from the server: its TIME plus the key's PTTL.
        const other = await store.claim('server-time', { leaseMs: 60_000 });
        expect(other.status).toBe('in_progress');
        expect(Math.abs((other as { leaseEndsAt: number }).leaseEndsAt - result.leaseEndsAt)).toBeLessThan(
          5_000,
        );
        await store.complete('server-time', result.token, { ttlMs: 90 * 86_400_000 });
        // So does a completed record's.
        expect(await redis.get('svc-test:server-time')).toBe('D:');
        expect(await redis.pttl('svc-test:server-time')).toBeGreaterThan(89 * 86_400_000);
        expect(await store.claim('server-time', { leaseMs: 60_000 })).toEqual({ status: 'completed' });
        await redis.del('svc-test:server-time');
      });

      it('times out with store_unavailable when the server does not answer', async () => {
        const store = await kind.create({ clock: createManualClock(), timeoutMs: 100 });
        const admin = (kind.client as Redis).duplicate({ enableOfflineQueue: true });
        await admin.client('PAUSE', 1_000, 'ALL');
        const error = await store.claim('paused', { leaseMs: 1_000 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(WebhookError);
        expect(error).toMatchObject({ code: 'store_unavailable', status: 503 });
        await admin.client('UNPAUSE');
        admin.disconnect();
      });

      it('costs a receiver one SET per claim and one script call per complete (the claim token adds none)', async () => {
        const store = await kind.create();
        const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store });
        receiver.on('deal.won', () => {});
        await deliver(receiver, crmDelivery('deal.won')); // warm-up: scripts loaded on the server
        const redis = kind.client as Redis;
        await redis.config('RESETSTAT');
        expect((await deliver(receiver, crmDelivery('deal.won'))).status).toBe(200);
        // The claim's SET NX, the complete script and the SET it runs.
        expect(await commandCalls(redis)).toEqual({ set: 2, scripts: 1 });
      });
    });
  },
  ['redis-ioredis'],
);

forEachStore(
  (kind) => {
    describe('a lease that ends with its key (claimed by SET NX, no clock)', () => {
      it('is held, resent, extended, completed, released and abandoned by its token only', async () => {
        const client = kind.client as { get(key: string): Promise<string | null> };
        const store = createRedisStore({ client: kind.client as Redis, prefix: `svc-ttl-${kind.name}:` });
        const value = (key: string) => client.get(`svc-ttl-${kind.name}:${key}`);
        const claim = async (key: string) => {
          const result = await store.claim(key, { leaseMs: 60_000 });
          if (result.status !== 'claimed') throw new Error(`${key} not claimed`);
          expect(await value(key)).toBe(`L::${result.token}`);
          return result;
        };
        const held = await claim('held');
        expect(await store.claim('held', { leaseMs: 60_000, token: held.token })).toMatchObject({
          status: 'claimed',
          token: held.token,
        });
        expect(await store.extend('held', 'another-token', { leaseMs: 60_000 })).toBe(false);
        expect(await store.complete('held', 'another-token', { ttlMs: 60_000 })).toBe(false);
        expect(await store.release('held', 'another-token')).toBe(false);
        expect(await store.abandon('held', 'another-token', { leaseMs: 60_000 })).toBe(false);
        expect(await store.extend('held', held.token, { leaseMs: 120_000 })).toBe(true);
        expect(await value('held')).toBe(`L::${held.token}`);
        expect(await store.complete('held', held.token, { ttlMs: 60_000 })).toBe(true);
        expect(await store.claim('held', { leaseMs: 60_000 })).toEqual({ status: 'completed' });

        const released = await claim('released');
        expect(await store.release('released', released.token)).toBe(true);
        expect(await value('released')).toBeNull();

        const abandoned = await claim('abandoned');
        expect(await store.abandon('abandoned', abandoned.token, { leaseMs: 60_000 })).toBe(true);
        expect(await store.claim('abandoned', { leaseMs: 60_000, token: abandoned.token })).toMatchObject({
          status: 'in_progress',
        });
        expect((await store.claim('abandoned', { leaseMs: 60_000 })).status).toBe('claimed');

        // The lease ends when its key expires: its token can no longer write, another claim takes it.
        const lapsed = await store.claim('lapsed', { leaseMs: 50 });
        if (lapsed.status !== 'claimed') throw new Error('lapsed not claimed');
        await new Promise((resolve) => setTimeout(resolve, 120));
        expect(await store.extend('lapsed', lapsed.token, { leaseMs: 60_000 })).toBe(false);
        expect(await store.complete('lapsed', lapsed.token, { ttlMs: 60_000 })).toBe(false);
        expect(await store.release('lapsed', lapsed.token)).toBe(false);
        expect((await claim('lapsed')).token).not.toBe(lapsed.token);
      });
    });

    describe('outage', () => {
      it('fails with store_unavailable while Redis is down and works again after restart', async () => {
        const store = await kind.create({ clock: createManualClock() });
        const first = await store.claim('before', { leaseMs: 60_000 });
        if (first.status !== 'claimed') throw new Error('not claimed');
        await store.complete('before', first.token, { ttlMs: 60_000 });
        await kind.redis!.stop();
        await expect(store.claim('during', { leaseMs: 60_000 })).rejects.toMatchObject({
          code: 'store_unavailable',
        });
        await kind.redis!.start();
        // The client reconnects by itself; the saved data survived the graceful restart.
        await expect
          .poll(() => store.claim('before', { leaseMs: 60_000 }).catch(() => 'down'), { timeout: 10_000 })
          .toEqual({ status: 'completed' });
        expect((await store.claim('during', { leaseMs: 60_000 })).status).toBe('claimed');
      });
    });
  },
  ['redis-ioredis', 'redis-node-redis'],
);
