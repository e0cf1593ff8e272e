/**
 * The BullMQ hand-off and the Redis dedup store on a real three-master Redis Cluster: the queue's
 * keys share one slot through a hash-tag prefix, the dedup keys spread over the masters.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createBullmqHandoff, createBullmqWorker } from '@svc/webhooks/bullmq';
import { createRedisStore } from '@svc/webhooks/redis';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';
import { redisAvailable } from '../support/servers.js';

let cluster: RedisCluster;
const closers: (() => Promise<unknown>)[] = [];

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function connect(): Cluster {
  const client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
  closers.push(async () => client.disconnect());
  return client;
}

describe.runIf(redisAvailable())('BullMQ hand-off on a Redis Cluster', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await cluster?.close();
  });

  it('enqueues under a hash-tag prefix and two workers handle every delivery once', async () => {
    const prefix = '{svc-webhooks}';
    const queue = new Queue('cluster-handoff', { connection: connect(), prefix });
    closers.push(() => queue.close());
    const dedup = createRedisStore({ client: connect(), prefix: 'cluster-dedup:' });
    const options = { secret: MAIL_SECRET, dedup, timeoutMs: 2_000, leaseMs: 3_000 };
    const receiver = createMailReceiver({ ...options, handoff: createBullmqHandoff({ queue }) });
    const handled = new Map<string, number>();
    // Two worker "machines", each with its own receiver module, sharing the queue and the store.
    for (let i = 0; i < 2; i++) {
      const workerReceiver = createMailReceiver(options).on('delivered', (event) => {
        handled.set(event.deliveryId, (handled.get(event.deliveryId) ?? 0) + 1);
      });
      const worker = createBullmqWorker(workerReceiver, {
        queueName: 'cluster-handoff',
        connection: connect(),
        prefix,
        concurrency: 4,
        shutdownSignals: [],
      });
      closers.push(() => worker.close());
    }
    const deliveries = Array.from({ length: 60 }, () => mailDelivery('delivered'));
    const outcomes = await Promise.all(
      deliveries.flatMap((d) => [deliver(receiver, d), deliver(receiver, d)]),
    );
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    await until(() => handled.size === 60, 'every delivery');
    await until(async () => (await queue.getJobCounts('completed')).completed === 60, 'every job completed');
    expect([...handled.values()].every((n) => n === 1)).toBe(true);
    // The dedup records live on all three masters; the queue's keys on one.
    const client = connect();
    await client.ping(); // connected: its node list is known
    const perMaster = await Promise.all(
      client.nodes('master').map(async (node) => ({
        dedup: (await node.keys('cluster-dedup:*')).length,
        queue: (await node.keys('{svc-webhooks}:*')).length,
      })),
    );
    expect(perMaster.filter((m) => m.dedup > 0).length).toBe(3);
    expect(perMaster.filter((m) => m.queue > 0).length).toBe(1);
  });

  it('without a hash tag the queue cannot write: 503, nothing acknowledged', async () => {
    const queue = new Queue('no-hash-tag', { connection: connect() });
    queue.on('error', () => undefined);
    closers.push(() => queue.close());
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      dedup: createRedisStore({ client: connect(), prefix: 'cluster-dedup-2:' }),
      handoff: createBullmqHandoff({ queue }),
    });
    const outcome = await deliver(receiver, mailDelivery('delivered'));
    expect([outcome.status, outcome.code]).toEqual([503, 'handoff_unavailable']);
  });

  it('waitForReplicas sends WAIT to the master that stored the job (no replicas here: 503)', async () => {
    const connection = connect();
    const queue = new Queue('replicated', { connection, prefix: '{svc-replicated}' });
    queue.on('error', () => undefined);
    closers.push(() => queue.close());
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      logger: () => undefined,
      handoff: createBullmqHandoff({ queue, waitForReplicas: { replicas: 1, waitMs: 100 } }),
    });
    await queue.waitUntilReady();
    // Each master's MONITOR: which of them ran the job's script, and which the WAIT.
    const seen: { node: number; command: string }[] = [];
    const monitors = await Promise.all(
      cluster.nodes.map(async ({ port }) => {
        // Connected in monitor mode with its error listener first: ioredis reports a command echoed
        // while MONITOR starts as an 'error', which would otherwise end the test.
        const monitor = new Redis(port, '127.0.0.1', { monitor: true });
        monitor.on('error', () => undefined);
        await new Promise((resolve) => monitor.once('monitoring', resolve));
        return monitor;
      }),
    );
    monitors.forEach((monitor, node) => {
      monitor.on('monitor', (_time: string, args: string[]) => {
        const command = String(args[0]).toLowerCase();
        if (command === 'wait' || command === 'evalsha' || command === 'eval') seen.push({ node, command });
      });
    });
    const outcome = await deliver(receiver, mailDelivery('delivered'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const monitor of monitors) monitor.disconnect();
    expect([outcome.status, outcome.code]).toEqual([503, 'handoff_unavailable']);
    expect(outcome.verdict.kind === 'failed' && String(outcome.verdict.error)).toContain('0 of 1 replicas');
    const wait = seen.find((entry) => entry.command === 'wait');
    const script = seen.find((entry) => entry.command !== 'wait');
    expect(wait?.node).toBeDefined();
    expect(wait?.node).toBe(script?.node);
  });
});
