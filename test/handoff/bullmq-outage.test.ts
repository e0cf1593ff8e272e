/**
 * The BullMQ hand-off in a Redis outage holds nothing for the deliveries it refused: with Redis
 * stopped, 4,000 refused 20 KB deliveries grow the receiver's heap by less than 20 MiB and no job is
 * written when Redis returns; with Redis frozen (SIGSTOP: the connection stays "ready"), the writes
 * in flight are capped by `maxPendingWrites` and the rest are refused at once. The heap is measured in
 * a receiver process of its own run with `--expose-gc` (fixtures/bullmq-outage-receiver.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMailReceiver } from '@svc/webhooks';
import { createBullmqHandoff } from '@svc/webhooks/bullmq';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { bullmqJobId } from '../../src/handoff/bullmq/job-id.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECEIVER = fileURLToPath(new URL('./fixtures/bullmq-outage-receiver.ts', import.meta.url));
const MiB = 1_048_576;

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await Promise.resolve(step()).catch(() => undefined);
});

/** The receiver process, and a way to send it a command and read its next line. */
async function startReceiver(redis: RedisServer, queueName: string, env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', RECEIVER], {
    cwd: ROOT,
    env: { ...process.env, REDIS_PORT: String(redis.port), QUEUE_NAME: queueName, MAIL_SECRET, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanup.push(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) {
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const line = lines.shift();
      if (line !== undefined) return resolve(line);
      waiters.push(resolve);
      child.once('exit', (code) => reject(new Error(`receiver exited (${code}): ${stderr}`)));
    });
  expect(await next()).toBe('ready');
  return {
    async send(command: string): Promise<string> {
      child.stdin?.write(`${command}\n`);
      return next();
    },
  };
}

async function jobsIn(redis: RedisServer, queueName: string): Promise<number> {
  const reader = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  try {
    const queue = new Queue(queueName, { connection: reader });
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'completed', 'failed');
    await queue.close();
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  } finally {
    reader.disconnect();
  }
}

describe.runIf(redisAvailable())('BullMQ hand-off in a Redis outage', () => {
  it('Redis down: 4,000 refused 20 KB deliveries grow the heap by less than 20 MiB, and no job is written when Redis returns', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.close());
    const queueName = `outage-${process.pid}`;
    const receiver = await startReceiver(redis, queueName);
    await redis.stop();
    // Until the receiver's client saw the connection close, it is "ready": what the receiver wrote
    // then (a race with the flood on a loaded machine) ioredis keeps for Redis's return.
    expect(await receiver.send('disconnected')).toBe('disconnected');
    const { statuses, heapGrowthBytes } = JSON.parse(await receiver.send('flood'));
    expect(statuses).toEqual({ 503: 4_000 });
    expect(heapGrowthBytes / MiB).toBeLessThan(20);
    await redis.start();
    expect(await receiver.send('settle')).toBe('settled');
    expect(await jobsIn(redis, queueName)).toBe(1); // the warm-up delivery's job only
  }, 90_000);

  it('Redis frozen: the writes in flight stop at maxPendingWrites, the rest are refused at once', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.close());
    const queueName = `stall-${process.pid}`;
    const receiver = await startReceiver(redis, queueName, { MAX_PENDING: '100' });
    redis.pause();
    cleanup.push(() => redis.resume());
    const { statuses, heapGrowthBytes } = JSON.parse(await receiver.send('flood'));
    expect(statuses).toEqual({ 503: 4_000 });
    expect(heapGrowthBytes / MiB).toBeLessThan(20);
    redis.resume();
    expect(await receiver.send('settle')).toBe('settled');
    // What was in flight when Redis froze is written when it thaws (the sender's retry then finds it).
    expect(await jobsIn(redis, queueName)).toBeLessThanOrEqual(1 + 100);
  }, 90_000);

  it('never starts a write the receiver stopped waiting for (its signal aborted)', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.close());
    const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
    cleanup.push(() => connection.disconnect());
    const queue = new Queue(`aborted-${process.pid}`, { connection });
    cleanup.push(() => queue.close());
    await queue.waitUntilReady();
    const handoff = createBullmqHandoff({ queue });
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff, logger: () => undefined });
    // A job as the receiver writes it: taken from a delivery it accepted.
    const delivery = mailDelivery('delivered');
    expect((await deliver(receiver, delivery)).status).toBe(200);
    const job = (await queue.getJob(bullmqJobId(`mail:delivery:${delivery.deliveryId}`)))!.data;
    const other = { ...job, dedupKey: 'mail:delivery:never-written' };
    await expect(handoff.enqueue(other, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'handoff_unavailable',
    });
    expect(await queue.getJob(bullmqJobId(other.dedupKey))).toBeUndefined();
  });
});
