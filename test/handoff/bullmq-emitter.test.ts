/**
 * The reference emitters deliver to hand-off receivers on BullMQ while every handler fails for 60
 * simulated seconds: each delivery succeeds at attempt 1 (the email webhook never pauses, no CRM
 * delivery fails), and once the handlers recover every event is handled exactly once.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createBullmqHandoff, createBullmqWorker } from '@svc/webhooks/bullmq';
import { createRedisStore } from '@svc/webhooks/redis';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrmEmitter, createMailEmitter, createVirtualClock } from '../../src/testing/index.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

const START = Date.parse('2025-03-01T12:00:00.000Z');
let redis: RedisServer;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await redis?.close();
});

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function engine(name: string) {
  const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  closers.push(async () => {
    await queue.close();
    connection.disconnect();
  });
  const dedup = createRedisStore({ client: connection, prefix: `${name}:dedup:` });
  // Retries spread over ~25 s of real time: longer than the outage below lasts in real time.
  const handoff = createBullmqHandoff({ queue, attempts: 10, backoffMs: 50 });
  return { connection, queue, dedup, handoff };
}

describe.runIf(redisAvailable())('hand-off under a 60 s handler outage (reference emitters)', () => {
  it('email: every delivery succeeds at attempt 1, the webhook stays active, each event is handled once', async () => {
    const clock = createVirtualClock({ start: START });
    const { connection, queue, dedup, handoff } = engine(`emitter-mail-${process.pid}`);
    let outage = true;
    let failedRuns = 0;
    const effects = new Map<string, number>();
    const emitter = createMailEmitter({
      clock,
      seed: 'handoff',
      handler: (request) => receiver.handle(request),
    });
    const hook = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['opened'] });
    const receiver = createMailReceiver({ secret: hook.secret, dedup, handoff });
    receiver.on('opened', (event) => {
      if (outage) {
        failedRuns++;
        throw new Error('database unavailable');
      }
      effects.set(event.deliveryId, (effects.get(event.deliveryId) ?? 0) + 1);
    });
    const worker = createBullmqWorker(receiver, { queueName: queue.name, connection, shutdownSignals: [] });
    closers.push(() => worker.close());

    const ids: string[] = [];
    for (let t = 0; t < 60_000; t += 2_000) {
      const [delivery] = await emitter.emit('opened');
      ids.push(delivery!.id);
      await clock.advance(2_000);
    }
    await clock.runAll();
    await until(() => failedRuns >= ids.length, 'every handler to have failed once');
    // The sender's view: 30 deliveries, 30 attempts, all succeeded; the webhook never paused.
    const records = ids.map((id) => emitter.getDelivery(id));
    expect(records.map((r) => [r.status, r.attempts.length, r.attempts[0]!.statusCode])).toEqual(
      ids.map(() => ['succeeded', 1, 200]),
    );
    expect(emitter.getWebhook(hook.id)).toMatchObject({ status: 'active', consecutiveFailures: 0 });

    outage = false;
    await until(() => effects.size === ids.length, 'every event handled');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: ids.length, failed: 0 });
  });

  it('CRM: no delivery fails its 3 attempts within 3 s while the handlers are down', async () => {
    const clock = createVirtualClock({ start: START });
    const { connection, queue, dedup, handoff } = engine(`emitter-crm-${process.pid}`);
    let outage = true;
    let failedRuns = 0;
    const effects = new Map<string, number>();
    const emitter = createCrmEmitter({
      clock,
      seed: 'handoff',
      handler: (request) => receiver.handle(request),
    });
    const hook = emitter.createWebhook({
      name: 'handoff',
      url: 'https://hooks.example.com/crm',
      events: ['deal.won'],
    });
    const receiver = createCrmReceiver({ secret: hook.secret, dedup, handoff });
    receiver.on('deal.won', (event) => {
      if (outage) {
        failedRuns++;
        throw new Error('database unavailable');
      }
      effects.set(event.deliveryId, (effects.get(event.deliveryId) ?? 0) + 1);
    });
    const worker = createBullmqWorker(receiver, { queueName: queue.name, connection, shutdownSignals: [] });
    closers.push(() => worker.close());
    const ids: string[] = [];
    for (let t = 0; t < 60_000; t += 2_000) {
      const [delivery] = await emitter.emit('deal.won');
      ids.push(delivery!.id);
      await clock.advance(2_000);
    }
    await clock.runAll();
    expect(
      ids.map((id) => [emitter.getDelivery(id).status, emitter.getDelivery(id).attempts.length]),
    ).toEqual(ids.map(() => ['succeeded', 1]));
    await until(() => failedRuns >= ids.length, 'every handler to have failed once');
    outage = false;
    await until(() => effects.size === ids.length, 'every event handled');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
  });
});
