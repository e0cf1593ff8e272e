/**
 * The Redis store's opt-in `waitForReplicas` against a real primary and a real replica: a claim and a
 * completion are answered only once the replica has them; with the replica gone a claim is
 * `store_unavailable` (the receiver answers 503, no handler runs) rather than a claim a failover could
 * lose. ioredis and node-redis.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createRedisStore } from '@svc/webhooks/redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

let primary: RedisServer;
let replica: RedisServer;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  primary = await startRedis();
  replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const probe = new Redis(replica.port, '127.0.0.1');
  try {
    for (let i = 0; i < 400; i++) {
      if (String(await probe.info('replication')).includes('master_link_status:up')) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    probe.disconnect();
  }
}, 60_000);

afterAll(async () => {
  for (const close of cleanup.reverse()) await close().catch(() => undefined);
  await replica?.close();
  await primary?.close();
});

function ioredis(server: RedisServer): Redis {
  const client = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  cleanup.push(async () => client.disconnect());
  return client;
}

describe('createRedisStore({ waitForReplicas })', () => {
  it('refuses a waitForReplicas that is not two positive whole numbers', () => {
    const client = ioredis(primary);
    for (const bad of [{ replicas: 0, waitMs: 100 }, { replicas: 1, waitMs: -1 }, { replicas: 1 }]) {
      expect(() => createRedisStore({ client, waitForReplicas: bad as never })).toThrow(
        expect.objectContaining({ code: 'options_invalid' }),
      );
    }
  });

  it('ioredis: a claim and a completion are on the replica when they are answered', async () => {
    const store = createRedisStore({
      client: ioredis(primary),
      waitForReplicas: { replicas: 1, waitMs: 1_000 },
    });
    const onReplica = ioredis(replica);
    const claim = await store.claim('k-io', { leaseMs: 30_000 });
    expect(claim.status).toBe('claimed');
    expect(await onReplica.exists('webhooks:dedup:k-io')).toBe(1);
    expect(await store.complete('k-io', (claim as { token: string }).token, { ttlMs: 60_000 })).toBe(true);
    expect(await store.claim('k-io', { leaseMs: 30_000 })).toEqual({ status: 'completed' });
  });

  it('node-redis: the same, through sendCommand', async () => {
    const client = createClient({ url: primary.url });
    client.on('error', () => undefined);
    await client.connect();
    cleanup.push(() => client.quit());
    const store = createRedisStore({ client, waitForReplicas: { replicas: 1, waitMs: 1_000 } });
    const claim = await store.claim('k-node', { leaseMs: 30_000 });
    expect(claim.status).toBe('claimed');
    expect(await store.complete('k-node', (claim as { token: string }).token, { ttlMs: 60_000 })).toBe(true);
  });

  it('with the replica gone, a claim is store_unavailable and the receiver runs no handler (503)', async () => {
    const dedup = createRedisStore({
      client: ioredis(primary),
      waitForReplicas: { replicas: 1, waitMs: 200 },
    });
    let runs = 0;
    const receiver = createMailReceiver({ secret: MAIL_SECRET, dedup }).on('delivered', () => {
      runs++;
    });
    expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
    await replica.kill();
    await expect(dedup.claim('k-gone', { leaseMs: 30_000 })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
    const refused = await deliver(receiver, mailDelivery('delivered'));
    expect([refused.status, refused.code]).toEqual([503, 'store_unavailable']);
    expect(runs).toBe(1);
  });
});
