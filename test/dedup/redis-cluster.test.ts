/**
 * The Redis dedup store against a real three-master Redis Cluster, through both clients: the whole
 * store contract, with keys spread over the masters.
 */
import { createRedisStore } from '@svc/webhooks/redis';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';
import { redisAvailable } from '../support/servers.js';
import type { StoreKind, StoreName } from '../support/stores.js';
import { storeContract } from './contract.js';

let cluster: RedisCluster;
let ioredis: Cluster;
let nodeRedis: ReturnType<typeof createCluster>;
let sequence = 0;

describe.runIf(redisAvailable())('Redis store on a Redis Cluster', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
    ioredis = new Cluster(cluster.nodes);
    nodeRedis = createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) });
    await nodeRedis.connect();
  });

  afterAll(async () => {
    ioredis?.disconnect();
    await nodeRedis?.close().catch(() => undefined);
    await cluster?.close();
  });

  for (const client of ['ioredis', 'node-redis'] as const) {
    describe(`${client} cluster client`, () => {
      const kind: StoreKind = {
        name: `redis-${client}` as StoreName,
        without: ['prune'], // Redis expires records itself
        async create({ clock, timeoutMs } = {}) {
          const prefix = `cluster-${client}-${++sequence}:`;
          return createRedisStore({
            client: client === 'ioredis' ? ioredis : nodeRedis,
            prefix,
            clock,
            callTimeoutMs: timeoutMs,
          });
        },
      };
      storeContract(kind);

      it('spreads the keys of many deliveries over all three masters', async () => {
        const store = await kind.create();
        for (let i = 0; i < 30; i++) {
          const claim = await store.claim(`mail:delivery:spread-${i}`, { leaseMs: 60_000 });
          if (claim.status !== 'claimed') throw new Error('not claimed');
          expect(await store.complete(`mail:delivery:spread-${i}`, claim.token, { ttlMs: 60_000 })).toBe(
            true,
          );
        }
        const counts = await Promise.all(ioredis.nodes('master').map((node) => node.dbsize()));
        expect(counts.filter((n) => n > 0).length).toBe(3);
      });
    });
  }
});
