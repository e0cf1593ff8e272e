/**
 * SIGTERM on a BullMQ hand-off worker process: it takes no new job and finishes the running one
 * within the deadline; past the deadline the handler's signal aborts and the job is put back
 * without using an attempt, so the next worker runs it at attempt 1 and it completes once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createMailReceiver } from '@svc/webhooks';
import { createBullmqHandoff } from '@svc/webhooks/bullmq';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

const root = new URL('../../', import.meta.url).pathname;
let redis: RedisServer;
let admin: Redis;
const children: ChildProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  admin?.disconnect();
  await redis?.close();
});

function startWorker(queueName: string, handlerMs: number, shutdownMs: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', `${root}test/handoff/fixtures/bullmq-sigterm-worker.ts`],
    {
      cwd: root,
      env: {
        ...process.env,
        REDIS_PORT: String(redis.port),
        QUEUE_NAME: queueName,
        MAIL_SECRET,
        HANDLER_MS: String(handlerMs),
        SHUTDOWN_MS: String(shutdownMs),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
  });
}

async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function setup(queueName: string) {
  const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  const queue = new Queue(queueName, { connection });
  const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: createBullmqHandoff({ queue }) });
  return {
    queue,
    receiver,
    log: () => admin.lrange(`${queueName}:log`, 0, -1),
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  child.removeAllListeners('exit');
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
}

describe.runIf(redisAvailable())('BullMQ worker shutdown on SIGTERM', () => {
  it('finishes the running job within the deadline, takes no new one, then exits', async () => {
    const queueName = `sigterm-finish-${process.pid}`;
    const { queue, receiver, log, close } = await setup(queueName);
    const worker = await startWorker(queueName, 800, 10_000);
    const first = mailDelivery('delivered');
    await deliver(receiver, first);
    await until(async () => (await log()).length === 1, 'the handler to start');
    const exit = exited(worker);
    worker.kill('SIGTERM');
    const second = mailDelivery('delivered');
    await deliver(receiver, second);
    expect(await exit).toBe('SIGTERM');
    expect(await log()).toEqual([`start ${first.deliveryId} 1`, `done ${first.deliveryId} 1`]);
    expect(await queue.getJobCounts('completed', 'wait')).toEqual({ completed: 1, wait: 1 });
    await close();
  });

  it('past the deadline aborts the handler and puts the job back without using an attempt', async () => {
    const queueName = `sigterm-abort-${process.pid}`;
    const { queue, receiver, log, close } = await setup(queueName);
    const worker = await startWorker(queueName, 60_000, 300);
    const delivery = mailDelivery('delivered');
    await deliver(receiver, delivery);
    await until(async () => (await log()).length === 1, 'the handler to start');
    const exit = exited(worker);
    worker.kill('SIGTERM');
    expect(await exit).toBe('SIGTERM');
    expect(await queue.getJobCounts('delayed', 'failed', 'active')).toEqual({
      delayed: 1,
      failed: 0,
      active: 0,
    });
    // The next worker runs it again at attempt 1 (its claim was released) and completes it.
    const next = await startWorker(queueName, 10, 10_000);
    await until(async () => (await queue.getJobCounts('completed')).completed === 1, 'the job to complete');
    expect(await log()).toEqual([
      `start ${delivery.deliveryId} 1`,
      `start ${delivery.deliveryId} 1`,
      `done ${delivery.deliveryId} 1`,
    ]);
    next.kill('SIGKILL');
    await close();
  });
});
