/**
 * A dedup store that stalls longer than the receiver's store timeout (SIGSTOP, then SIGCONT: a slow
 * disk, a failover) must not lose CRM deliveries. The claim sent during the stall is answered 503 but
 * still runs when the store resumes; the receiver abandons it, so the CRM's retries (1 s, then 2 s
 * later) run the handler. Real redis-server and postgres, real HTTP, real time: the CRM schedule is
 * the point. Each delivery's handler must run exactly once.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCrmReceiver, type DedupStore } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { createRedisStore } from '@svc/webhooks/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PostgresServer,
  postgresAvailable,
  type RedisServer,
  redisAvailable,
  startPostgres,
  startRedis,
} from '../support/servers.js';
import { deliverOnCrmSchedule } from './crm-schedule.js';
import { answered, CRM_SECRET, crmDelivery } from './support.js';

const DELIVERIES = 10;
const STALLS_MS = [2_500, 3_500];

interface Backend {
  store: DedupStore;
  pause(): void;
  resume(): void;
}

/** A CRM receiver on a real HTTP server; counts handler runs per delivery id. */
async function serve(store: DedupStore): Promise<{ url: string; runs: Map<string, number>; server: Server }> {
  const runs = new Map<string, number>();
  const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup: store });
  receiver.on('deal.won', (event) => {
    runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1);
  });
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, runs, server };
}

function stallScenarios(name: string, backend: () => Promise<Backend>): void {
  for (const stallMs of STALLS_MS) {
    it(`${name}: ${DELIVERIES} deliveries during a ${stallMs} ms stall each run their handler once`, async () => {
      const { store, pause, resume } = await backend();
      const { url, runs, server } = await serve(store);
      try {
        // Warm: scripts loaded on Redis, connections open in the pool, as in a running service.
        expect(await deliverOnCrmSchedule(url, crmDelivery('deal.won'))).toEqual([200]);
        const deliveries = Array.from({ length: DELIVERIES }, () => crmDelivery('deal.won'));
        pause();
        // The store stays stopped for stallMs and until every first attempt was answered: on a slow
        // machine an attempt can reach the store later than stallMs after the pause, and must still
        // meet the stall.
        let firstAnswers = 0;
        let allFirstAnswered = () => {};
        const firstAnswered = new Promise<void>((resolve) => {
          allFirstAnswered = resolve;
        });
        const resumed = Promise.all([firstAnswered, sleep(stallMs)]).then(resume);
        const statuses = await Promise.all(
          deliveries.map((delivery) =>
            deliverOnCrmSchedule(url, delivery, (attempt) => {
              if (attempt === 0 && ++firstAnswers === DELIVERIES) allFirstAnswered();
            }),
          ),
        );
        await resumed;
        // The first attempt met the stall and was refused (503); a retry got it through.
        for (const attempts of statuses) {
          expect(attempts[0]).toBe(503);
          expect(attempts.at(-1)).toBe(200);
        }
        expect(deliveries.map((d) => runs.get(d.deliveryId) ?? 0)).toEqual(deliveries.map(() => 1));
      } finally {
        resume();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }, 60_000);
  }
}

describe.runIf(redisAvailable())('store stall: Redis (ioredis, as docs/dedup.md recommends)', () => {
  let redis: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url, { commandTimeout: 2_000, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    await client.ping();
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });
  let n = 0;
  stallScenarios('redis', async () => ({
    store: createRedisStore({ client, prefix: `stall${++n}:` }),
    pause: () => redis.pause(),
    resume: () => redis.resume(),
  }));
});

describe.runIf(redisAvailable())('store stall: Redis (node-redis, as docs/dedup.md recommends)', () => {
  let redis: RedisServer;
  let client: ReturnType<typeof createClient>;
  beforeAll(async () => {
    redis = await startRedis();
    client = createClient({ url: redis.url, disableOfflineQueue: true });
    client.on('error', () => {});
    await client.connect();
  });
  afterAll(async () => {
    client?.destroy();
    await redis?.close();
  });
  let n = 0;
  stallScenarios('node-redis', async () => ({
    store: createRedisStore({ client, prefix: `stall${++n}:` }),
    pause: () => redis.pause(),
    resume: () => redis.resume(),
  }));
});

/**
 * The receiver owns the deadline of every call it makes: it passes its storeTimeoutMs to the store,
 * which uses it instead of its own timeoutMs, whether the receiver's is shorter or longer. The store's
 * own timeoutMs bounds only calls made on it directly.
 */
function whichTimeoutDecides(name: string, backend: (timeoutMs: number) => Promise<Backend>): void {
  const cases: [string, { storeTimeoutMs: number; timeoutMs: number }][] = [
    [
      "the receiver's storeTimeoutMs, when shorter than the store's timeoutMs",
      { storeTimeoutMs: 300, timeoutMs: 60_000 },
    ],
    [
      "the receiver's storeTimeoutMs, when longer than the store's timeoutMs",
      { storeTimeoutMs: 900, timeoutMs: 300 },
    ],
  ];
  for (const [title, timeouts] of cases) {
    it(`${name}: ${title} decides; the claim is abandoned`, async () => {
      const { store, pause, resume } = await backend(timeouts.timeoutMs);
      const errors: unknown[] = [];
      const receiver = createCrmReceiver({
        secret: CRM_SECRET,
        dedup: store,
        storeTimeoutMs: timeouts.storeTimeoutMs,
      });
      let runs = 0;
      receiver.on('deal.won', () => {
        runs++;
      });
      receiver.onError((error) => {
        errors.push(error);
      });
      // Warm: scripts loaded, connections open.
      expect(answered(await receiver.receive({ ...crmDelivery('deal.won'), method: 'POST' })).status).toBe(
        200,
      );
      runs = 0;
      const delivery = crmDelivery('deal.won');
      pause();
      try {
        const first = answered(
          await receiver.receive({
            body: delivery.body,
            headers: delivery.headers,
            method: 'POST',
          }),
        );
        expect(first.status).toBe(503);
      } finally {
        resume();
      }
      expect(errors).toHaveLength(1);
      // Whichever timer noticed first (the store's, given the receiver's deadline, or the receiver's
      // own), the bound was the receiver's.
      const error = errors[0] as Error & { cause?: Error };
      const text = `${error.message} ${error.cause?.message ?? ''}`;
      expect(text).toContain(`within ${timeouts.storeTimeoutMs} ms`);
      expect(text).not.toContain(`within ${timeouts.timeoutMs} ms`);
      // The stalled claim ran when the store resumed, and its abandon behind it.
      await expect
        .poll(
          async () =>
            answered(
              await receiver.receive({ body: delivery.body, headers: delivery.headers, method: 'POST' }),
            ).status,
          { timeout: 10_000, interval: 200 },
        )
        .toBe(200);
      expect(runs).toBe(1);
    });
  }

  it(`${name}: a call made on the store directly is bounded by the store's timeoutMs`, async () => {
    const { store, pause, resume } = await backend(300);
    await store.claim('direct:warm', { leaseMs: 30_000 });
    pause();
    let failure: unknown;
    try {
      await store.claim('direct:stalled', { leaseMs: 30_000 }).catch((error: unknown) => {
        failure = error;
      });
    } finally {
      resume();
    }
    expect(failure).toMatchObject({
      code: 'store_unavailable',
      cause: expect.objectContaining({ message: expect.stringMatching(/within 300 ms/) }),
    });
  });
}

describe.runIf(redisAvailable())('store stall: which timeout decides (Redis)', () => {
  let redis: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 }); // no client timeout: only ours apply
    client.on('error', () => {});
    await client.ping();
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });
  let n = 0;
  whichTimeoutDecides('redis', async (timeoutMs) => ({
    store: createRedisStore({ client, prefix: `which${++n}:`, callTimeoutMs: timeoutMs }),
    pause: () => redis.pause(),
    resume: () => redis.resume(),
  }));
});

describe.runIf(postgresAvailable())('store stall: which timeout decides (Postgres)', () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: postgres.connectionString }); // no client timeout
    pool.on('error', () => {});
  });
  afterAll(async () => {
    postgres?.resume();
    await pool?.end();
    await postgres?.close();
  });
  let n = 0;
  whichTimeoutDecides('postgres', async (timeoutMs) => {
    const store = createPostgresStore({ client: pool, table: `which_${++n}`, callTimeoutMs: timeoutMs });
    await store.migrate();
    return { store, pause: () => postgres.pause(), resume: () => postgres.resume() };
  });
});

// Two pool setups: the recommended one (the client gives up on a query after 2 s and drops that
// connection) and one with no client-side timeout, where only the store's and the receiver's bounds
// apply and the stalled claim surely runs when Postgres resumes.
const POOL_SETUPS: [string, pg.PoolConfig][] = [
  ['pg Pool as docs/dedup.md recommends', { query_timeout: 2_000, connectionTimeoutMillis: 2_000 }],
  ['pg Pool without client timeouts', {}],
];

for (const [setup, config] of POOL_SETUPS) {
  describe.runIf(postgresAvailable())(`store stall: Postgres (${setup})`, () => {
    let postgres: PostgresServer;
    let pool: pg.Pool;
    beforeAll(async () => {
      postgres = await startPostgres();
      pool = new pg.Pool({ connectionString: postgres.connectionString, ...config });
      pool.on('error', () => {});
    });
    afterAll(async () => {
      postgres?.resume();
      await pool?.end();
      await postgres?.close();
    });
    let n = 0;
    stallScenarios('postgres', async () => {
      const store = createPostgresStore({ client: pool, table: `stall_${++n}` });
      await store.migrate();
      return { store, pause: () => postgres.pause(), resume: () => postgres.resume() };
    });
  });
}
