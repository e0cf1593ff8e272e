/**
 * The BullMQ worker against a real redis-server: a misconfiguration fails when the worker is created
 * or started (`options_invalid`), not on each job; a job whose stored hash holds data that is not
 * JSON becomes a `job_invalid` dead letter instead of failing without end; re-driving dead letters
 * that fail again at once returns, each letter re-driven exactly once.
 */
import { createMailReceiver, type MailReceiver } from '@svc/webhooks';
import {
  createBullmqHandoff,
  createBullmqWorker,
  listBullmqDeadLetters,
  redriveBullmqDeadLetters,
} from '@svc/webhooks/bullmq';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bullmqJobId } from '../../src/handoff/bullmq/job-id.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

let redis: RedisServer;
let connection: Redis;
let sequence = 0;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redis = await startRedis();
  connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});
afterAll(async () => {
  connection?.disconnect();
  await redis?.close();
});

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

function setup(): { queue: Queue; queueName: string; receiver: MailReceiver; jobErrors: string[] } {
  const queueName = `worker-${process.pid}-${++sequence}`;
  const queue = new Queue(queueName, { connection });
  cleanup.push(() => queue.close());
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    timeoutMs: 2_000,
    leaseMs: 3_000,
    logger: () => undefined,
    handoff: createBullmqHandoff({ queue, backoffMs: 10 }),
  });
  const jobErrors: string[] = [];
  receiver.onError((error, info) => {
    if (info.phase === 'job') jobErrors.push(error instanceof Error ? error.message : String(error));
  });
  return { queue, queueName, receiver, jobErrors };
}

function startWorker(receiver: MailReceiver, queueName: string, extra: { timeoutMs?: number } = {}) {
  const worker = createBullmqWorker(receiver, {
    queueName,
    connection,
    shutdownSignals: [],
    workerOptions: { stalledInterval: 1_000, lockDuration: 2_000 },
    ...extra,
  });
  cleanup.push(() => worker.close());
  return worker;
}

describe.runIf(redisAvailable())('BullMQ worker', () => {
  it('refuses options it cannot run with when created: options_invalid, nothing started', () => {
    const { receiver, queueName } = setup();
    const bad: [string, unknown][] = [
      ['concurrency', { concurrency: 0 }],
      ['timeoutMs', { timeoutMs: -1 }],
      ['busyDelayMs', { busyDelayMs: 1.5 }],
      ['shutdownTimeoutMs', { shutdownTimeoutMs: Number.NaN }],
      ['shutdownSignals', { shutdownSignals: 'SIGTERM' }],
      ['queueName', { queueName: '' }],
    ];
    for (const [name, override] of bad) {
      expect(() => createBullmqWorker(receiver, { queueName, connection, ...(override as object) })).toThrow(
        expect.objectContaining({ code: 'options_invalid', message: expect.stringContaining(name) }),
      );
    }
    expect(() => createBullmqWorker({} as MailReceiver, { queueName, connection })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
  });

  it('a handler budget not below the receiver lease fails at start and takes no job', async () => {
    const { queue, queueName, receiver, jobErrors } = setup();
    let handled = 0;
    receiver.on('delivered', () => {
      handled++;
    });
    expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
    const worker = startWorker(receiver, queueName, { timeoutMs: 3_000 }); // leaseMs is 3 000
    await expect(worker.ready).rejects.toMatchObject({
      code: 'options_invalid',
      message: expect.stringContaining('timeoutMs (3000) must be below the receiver'),
    });
    expect(jobErrors).toEqual([expect.stringContaining('timeoutMs (3000)')]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(handled).toBe(0);
    expect(await queue.getJobCounts('wait', 'active', 'failed')).toEqual({ wait: 1, active: 0, failed: 0 });
    // A budget below the lease starts, and runs the waiting job.
    await startWorker(receiver, queueName, { timeoutMs: 2_500 }).ready;
    expect(await until(() => handled === 1)).toBe(true);
  });

  it('dead-letters a job whose stored data is not JSON with job_invalid, once, and goes on', async () => {
    const { queue, queueName, receiver, jobErrors } = setup();
    let handled = 0;
    receiver.on('delivered', () => {
      handled++;
    });
    const corrupt = mailDelivery('delivered');
    await deliver(receiver, corrupt);
    const jobId = bullmqJobId(`mail:delivery:${corrupt.deliveryId}`);
    await connection.hset(`bull:${queueName}:${jobId}`, 'data', '{"v":1,"body":"trunc');
    startWorker(receiver, queueName);
    expect(await until(async () => (await queue.getFailedCount()) === 1, 10_000)).toBe(true);
    const letters = await listBullmqDeadLetters(queue);
    expect(letters).toEqual([
      expect.objectContaining({
        jobId,
        reason: 'Invalid hand-off job: its stored data is not JSON.',
        attemptsMade: 1,
      }),
    ]);
    expect(jobErrors).toEqual([expect.stringContaining('not JSON')]);
    // The worker goes on with the next delivery.
    await deliver(receiver, mailDelivery('delivered'));
    expect(await until(() => handled === 1)).toBe(true);
    expect(jobErrors).toHaveLength(1);
  });

  it('re-drives letters that fail again at once exactly once each, and returns', async () => {
    const { queue, queueName, receiver, jobErrors } = setup();
    // Three dead letters that fail again at once when re-driven: not jobs of this receiver.
    for (const id of ['a', 'b', 'c'])
      await queue.add('webhook', { not: 'a job' }, { jobId: `by-hand-${id}`, removeOnFail: false });
    const { worker } = startWorker(receiver, queueName);
    expect(await until(async () => (await queue.getFailedCount()) === 3)).toBe(true);
    const runs = new Map<string, number>();
    worker.on('failed', (job) => {
      if (job?.id) runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      redriveBullmqDeadLetters(queue),
      new Promise<'still running'>((resolve) => {
        timer = setTimeout(() => resolve('still running'), 10_000);
      }),
    ]);
    clearTimeout(timer);
    expect(outcome).toBe(3);
    expect(await until(async () => (await queue.getFailedCount()) === 3 && runs.size === 3)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(Object.fromEntries(runs)).toEqual({ 'by-hand-a': 1, 'by-hand-b': 1, 'by-hand-c': 1 });
    expect(jobErrors).toHaveLength(6); // three at first, three after the one re-drive
  }, 30_000);
});
