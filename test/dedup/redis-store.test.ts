import { createCrmReceiver, WebhookError } from '@svc/webhooks';
import { createRedisStore } from '@svc/webhooks/redis';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { forEachStore } from '../support/stores.js';
import { storeContract } from './contract.js';

forEachStore(storeContract, ['redis-ioredis', 'redis-node-redis']);

async function evalCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  const count = (name: string) => Number(info.match(new RegExp(`cmdstat_${name}:calls=(\\d+)`))?.[1] ?? 0);
  return count('evalsha') + count('eval');
}

forEachStore(
  (kind) => {
    describe('redis specifics', () => {
      it('uses one round trip (one script call) per claim and per complete', async () => {
        const store = await kind.create({ clock: createManualClock() });
        // Warm-up: the first use of each script on a server costs one NOSCRIPT answer and an EVAL.
        const warm = await store.claim('warm', { leaseMs: 1_000 });
        if (warm.status === 'claimed') await store.complete('warm', warm.token, { ttlMs: 1_000 });
        const redis = kind.client as Redis;
        await redis.config('RESETSTAT');
        const result = await store.claim('k', { leaseMs: 1_000 });
        const afterClaim = await evalCalls(redis);
        if (result.status !== 'claimed') throw new Error('not claimed');
        await store.complete('k', result.token, { ttlMs: 1_000 });
        expect([afterClaim, await evalCalls(redis)]).toEqual([1, 2]);
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
        expect(await redis.get('svc-test:server-time')).toBe(`L:${result.leaseEndsAt}:${result.token}`);
        expect(await redis.pttl('svc-test:server-time')).toBeGreaterThan(0);
        await store.complete('server-time', result.token, { ttlMs: 90 * 86_400_000 });
        expect(await redis.get('svc-test:server-time')).toMatch(/^D:\d+$/);
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

      it('costs a receiver one script call per claim and per complete (the claim token adds none)', async () => {
        const store = await kind.create();
        const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store });
        receiver.on('deal.won', () => {});
        await deliver(receiver, crmDelivery('deal.won')); // warm-up: scripts loaded on the server
        const redis = kind.client as Redis;
        await redis.config('RESETSTAT');
        expect((await deliver(receiver, crmDelivery('deal.won'))).status).toBe(200);
        expect(await evalCalls(redis)).toBe(2);
      });
    });
  },
  ['redis-ioredis'],
);

forEachStore(
  (kind) => {
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
