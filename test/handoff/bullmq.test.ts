/**
 * The BullMQ hand-off against a real redis-server: enqueue and acknowledge, one job per dedup key,
 * retries then dead letters and re-drive, bad job data, Redis down at enqueue.
 */
import { Buffer } from 'node:buffer';
import { createMailReceiver, type MailReceiver } from '@svc/webhooks';
import {
  createBullmqHandoff,
  createBullmqWorker,
  listBullmqDeadLetters,
  redriveBullmqDeadLetter,
} from '@svc/webhooks/bullmq';
import { createRedisStore } from '@svc/webhooks/redis';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqJobId } from '../../src/handoff/bullmq/job-id.js';
import { redisClientOf } from '../../src/handoff/bullmq/redis-client.js';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { deferred, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';
import { resigned } from './job-mac.js';

let redis: RedisServer;
let admin: Redis;
const closers: (() => Promise<unknown>)[] = [];
let sequence = 0;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  admin.on('error', () => undefined); // the outage test stops the server on purpose
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  admin?.disconnect();
  await redis?.close();
});

/** Polls `check` until it returns true (real time: the worker runs on its own). */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface Setup {
  queue: Queue;
  receiver: MailReceiver;
  queueName: string;
  connection: Redis;
  startWorker(): ReturnType<typeof createBullmqWorker>;
}

function setup(
  handoff: { attempts?: number; backoffMs?: number; enqueueTimeoutMs?: number } = {},
  lease: { leaseMs?: number; timeoutMs?: number } = {},
): Setup {
  const queueName = `handoff-${process.pid}-${++sequence}`;
  const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const queue = new Queue(queueName, { connection });
  queue.on('error', () => undefined); // connection errors while the server is stopped, on purpose
  const dedup = createRedisStore({ client: admin, prefix: `${queueName}:dedup:` });
  const receiver = createMailReceiver({
    secret: MAIL_SECRET,
    dedup,
    timeoutMs: 2_000,
    leaseMs: 3_000,
    ...lease,
    handoff: createBullmqHandoff({ queue, backoffMs: 10, ...handoff }),
  });
  closers.push(async () => {
    await queue.close();
    connection.disconnect();
  });
  return {
    queue,
    receiver,
    queueName,
    connection,
    startWorker() {
      const worker = createBullmqWorker(receiver, {
        queueName,
        connection,
        shutdownSignals: [],
        workerOptions: { stalledInterval: 1_000, lockDuration: 2_000 },
      });
      closers.push(() => worker.close());
      return worker;
    },
  };
}

describe.runIf(redisAvailable())('BullMQ hand-off', () => {
  it('acknowledges once Redis stored the job, and a worker runs the handler with signal and attempt', async () => {
    const { queue, receiver, startWorker } = setup();
    const seen: { id: string; attempt: number | undefined; signal: boolean }[] = [];
    receiver.on('delivered', (event, context) => {
      seen.push({
        id: event.deliveryId,
        attempt: context.attempt,
        signal: context.signal instanceof AbortSignal,
      });
    });
    const delivery = mailDelivery('delivered');
    const outcome = await deliver(receiver, delivery);
    expect([outcome.status, outcome.kind, outcome.body]).toEqual([
      200,
      'queued',
      '{"ok":true,"result":"queued"}',
    ]);
    // Stored before the answer: the job is in Redis now, and no handler ran in the request.
    const job = await queue.getJob(bullmqJobId(`mail:delivery:${delivery.deliveryId}`));
    expect(job?.data).toMatchObject({
      v: 2,
      service: 'mail',
      deliveryId: delivery.deliveryId,
      event: 'delivered',
    });
    expect(JSON.stringify(job?.data)).not.toContain(MAIL_SECRET);
    expect(seen).toEqual([]);
    startWorker();
    await until(() => seen.length === 1, 'the handler');
    expect(seen).toEqual([{ id: delivery.deliveryId, attempt: 1, signal: true }]);
  });

  it('answers a duplicate 2xx while its job is queued and while it runs, and keeps one job', async () => {
    const { queue, receiver, startWorker } = setup();
    const running = deferred();
    const release = deferred();
    let runs = 0;
    receiver.on('delivered', async () => {
      runs++;
      running.resolve();
      await release.promise;
    });
    const delivery = mailDelivery('delivered');
    const first = await Promise.all([deliver(receiver, delivery), deliver(receiver, delivery)]);
    expect(first.map((o) => o.status)).toEqual([200, 200]);
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 1 });
    startWorker();
    await running.promise;
    const whileRunning = await deliver(receiver, delivery);
    expect(whileRunning.status).toBe(200);
    expect(await queue.getJobCounts('wait', 'active')).toEqual({ wait: 0, active: 1 });
    release.resolve();
    await until(async () => (await queue.getJobCounts('completed')).completed === 1, 'completion');
    const afterwards = await deliver(receiver, delivery);
    expect(afterwards.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await queue.getJobCounts('wait', 'active', 'completed', 'delayed')).toEqual({
      wait: 0,
      active: 0,
      completed: 1,
      delayed: 0,
    });
    expect(runs).toBe(1);
  });

  it('retries a throwing handler per the policy, dead-letters it, lists it, and re-drives it once fixed', async () => {
    const { queue, receiver, startWorker } = setup({ attempts: 3, backoffMs: 10 });
    let fixed = false;
    const attempts: (number | undefined)[] = [];
    let effects = 0;
    const errors: string[] = [];
    receiver.onError((_error, info) => errors.push(info.phase));
    receiver.on('delivered', (_event, { attempt }) => {
      attempts.push(attempt);
      if (!fixed) throw new Error('downstream refused the suppression');
      effects++;
    });
    const delivery = mailDelivery('delivered');
    expect((await deliver(receiver, delivery)).status).toBe(200);
    startWorker();
    await until(async () => (await queue.getFailedCount()) === 1, 'the dead letter');
    expect(attempts).toEqual([1, 2, 3]);
    const letters = await listBullmqDeadLetters(queue);
    expect(letters).toEqual([
      expect.objectContaining({
        jobId: bullmqJobId(`mail:delivery:${delivery.deliveryId}`),
        dedupKey: `mail:delivery:${delivery.deliveryId}`,
        deliveryId: delivery.deliveryId,
        event: 'delivered',
        attemptsMade: 3,
        reason: expect.stringContaining('downstream refused the suppression'),
      }),
    ]);
    expect(errors).toContain('job'); // "dead-lettered after 3 attempts"
    // A copy of the delivery arriving now is acknowledged and adds nothing.
    expect((await deliver(receiver, delivery)).status).toBe(200);
    expect(await queue.getJobCounts('wait', 'delayed')).toEqual({ wait: 0, delayed: 0 });
    fixed = true;
    await redriveBullmqDeadLetter(queue, letters[0]!.jobId);
    await until(async () => (await queue.getJobCounts('completed')).completed === 1, 'the re-driven run');
    expect(effects).toBe(1);
    expect(attempts).toEqual([1, 2, 3, 1]);
    expect(await queue.getFailedCount()).toBe(0);
  });

  it('dead-letters bad job data with a clear reason, without retrying or crashing the worker', async () => {
    const { queue, receiver, startWorker } = setup();
    let handled = 0;
    receiver.on('delivered', () => {
      handled++;
    });
    const good = mailDelivery('delivered');
    await deliver(receiver, good);
    const written = (await queue.getJob(bullmqJobId(`mail:delivery:${good.deliveryId}`)))!.data;
    await queue.add('webhook', 'not an object', { jobId: 'by-hand-1', attempts: 5 });
    await queue.add('webhook', { ...written, v: 0 }, { jobId: 'older-version', attempts: 5 });
    await queue.add('webhook', { ...written, body: '!!not base64!!' }, { jobId: 'bad-body', attempts: 5 });
    await queue.add(
      'webhook',
      { ...written, body: btoa('{"event":"delivered"') },
      { jobId: 'bad-json', attempts: 5 },
    );
    await queue.add('webhook', { ...written, service: 'crm' }, { jobId: 'other-service', attempts: 5 });
    startWorker();
    await until(async () => (await queue.getFailedCount()) === 5 && handled === 1, 'five dead letters');
    const reasons = Object.fromEntries(
      (await listBullmqDeadLetters(queue)).map((l) => [l.jobId, [l.reason, l.attemptsMade]]),
    );
    expect(reasons).toEqual({
      'by-hand-1': ['Invalid hand-off job: job data is not an object.', 1],
      'older-version': ['Invalid hand-off job: format version 0 is not 2.', 1],
      'bad-body': ['Invalid hand-off job: body is not base64.', 1],
      'bad-json': ["Invalid hand-off job: its mac matches none of this worker's secrets.", 1],
      'other-service': ["Invalid hand-off job: job of another service, not 'mail'.", 1],
    });
    // The worker lives on: a new delivery is still handled.
    await deliver(receiver, mailDelivery('delivered'));
    await until(() => handled === 2, 'the next delivery');
  });

  it('dead-letters jobs written straight into the queue (a forged event, a changed key or secretIndex) as job_invalid; no handler runs', async () => {
    const { queue, receiver, startWorker } = setup();
    const ran: string[] = [];
    receiver.on(['delivered', 'bounced'], (event) => {
      ran.push(`${event.name} ${event.deliveryId}`);
    });
    const good = mailDelivery('delivered');
    await deliver(receiver, good);
    const written = (await queue.getJob(bullmqJobId(`mail:delivery:${good.deliveryId}`)))!.data as HandoffJob;
    // A plain `add` with a hand-made payload: the email service never sent this bounce.
    const bounce = mailDelivery('bounced', {
      deliveryId: 'dlv_forged',
      payload: {
        event: 'bounced',
        client_id: 'client_1',
        message_id: 'msg_1',
        to: 'ceo@victim.example',
        provider: 'gmail',
        timestamp: '2024-05-01T10:00:00.123Z',
      },
    });
    const forged: HandoffJob = {
      v: 2,
      service: 'mail',
      deliveryId: 'dlv_forged',
      event: 'bounced',
      dedupKey: 'mail:delivery:dlv_forged',
      receivedAt: Date.now(),
      secretIndex: 0,
      headers: { 'x-svcmail-event': 'bounced', 'x-svcmail-id': 'dlv_forged' },
      body: Buffer.from(bounce.body).toString('base64'),
      mac: '0'.repeat(64),
    };
    await queue.add('webhook', forged, { jobId: 'forged-bounce', attempts: 5 });
    await queue.add('webhook', resigned(forged, 'whsec_attacker_guess_0001'), {
      jobId: 'other-secret',
      attempts: 5,
    });
    // The genuine job again under a changed key (so its claim would be new), and with a secretIndex
    // out of range.
    await queue.add(
      'webhook',
      { ...written, dedupKey: 'mail:delivery:again' },
      { jobId: 'changed-key', attempts: 5 },
    );
    await queue.add('webhook', { ...written, secretIndex: 99 }, { jobId: 'index-99', attempts: 5 });
    startWorker();
    await until(async () => (await queue.getFailedCount()) === 4 && ran.length === 1, 'four dead letters');
    const letters = await listBullmqDeadLetters(queue);
    expect(letters.map((l) => [l.jobId, l.reason, l.attemptsMade]).sort()).toEqual(
      ['changed-key', 'forged-bounce', 'index-99', 'other-secret'].map((id) => [
        id,
        "Invalid hand-off job: its mac matches none of this worker's secrets.",
        1,
      ]),
    );
    expect(ran).toEqual([`delivered ${good.deliveryId}`]);
  });

  it('dead-letters a job whose event has no handler here as no_handler, and runs it once re-driven after one is registered', async () => {
    const { queue, receiver, startWorker } = setup();
    const delivery = mailDelivery('opened');
    await deliver(receiver, delivery);
    startWorker();
    await until(async () => (await queue.getFailedCount()) === 1, 'the dead letter');
    const [letter] = await listBullmqDeadLetters(queue);
    expect(letter).toMatchObject({ deliveryId: delivery.deliveryId, event: 'opened', attemptsMade: 1 });
    expect(letter?.reason).toContain('No handler');
    let ran = 0;
    receiver.on('opened', () => {
      ran++;
    });
    await redriveBullmqDeadLetter(queue, letter!.jobId);
    await until(() => ran === 1, 'the re-driven run');
  });

  it('never runs one delivery twice at once: a handler ignoring its signal past the lease keeps its claim', async () => {
    const { receiver, startWorker, queue } = setup({}, { leaseMs: 1_500, timeoutMs: 1_000 });
    let running = 0;
    let most = 0;
    let runs = 0;
    receiver.on('delivered', async () => {
      runs++;
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 4_000)); // > 2 leases, signal ignored
      running--;
    });
    await deliver(receiver, mailDelivery('delivered'));
    startWorker();
    await until(
      async () => most > 1 || (await queue.getJobCounts('completed')).completed === 1,
      'completion or a second run',
      30_000,
    );
    expect([runs, most]).toEqual([1, 1]);
  }, 40_000);

  it('answers 503 while Redis is down, acknowledges nothing it did not store, and takes the retries after', async () => {
    const { queue, receiver, startWorker } = setup({ enqueueTimeoutMs: 300 });
    const handled = new Set<string>();
    receiver.on('delivered', (event) => {
      handled.add(event.deliveryId);
    });
    await queue.waitUntilReady();
    // The client the hand-off writes on and checks: BullMQ's own copy of the connection given to it.
    const client = (await redisClientOf(queue))!;
    await redis.stop();
    const deliveries = Array.from({ length: 5 }, () => mailDelivery('delivered'));
    const down = await Promise.all(deliveries.map((d) => deliver(receiver, d)));
    expect(down.map((o) => [o.status, o.code, o.headers['retry-after']])).toEqual(
      deliveries.map(() => [503, 'handoff_unavailable', '1']),
    );
    await redis.start();
    // The sender's retries come later (CRM 1 s and 2 s, email a minute): by then the client reconnected.
    await until(() => client.status === 'ready', 'the reconnect');
    // The sender's retries, each sent again until acknowledged (the 300 ms bound counts from receipt:
    // a loaded machine can pass it with Redis up), then each event handled once.
    const acknowledged = async (delivery: (typeof deliveries)[number]) => {
      const statuses: number[] = [];
      while (statuses.at(-1) !== 200 && statuses.length < 20)
        statuses.push((await deliver(receiver, delivery)).status);
      return statuses.at(-1);
    };
    expect(await Promise.all(deliveries.map(acknowledged))).toEqual(deliveries.map(() => 200));
    startWorker();
    await until(() => handled.size === 5, 'every retried delivery');
    const counts = await queue.getJobCounts('completed', 'failed', 'wait', 'delayed');
    expect(counts).toEqual({ completed: 5, failed: 0, wait: 0, delayed: 0 });
  });

  it('costs the receiver one round trip to Redis per delivery: one script call, new or duplicate', async () => {
    const { queue, receiver, connection } = setup();
    await deliver(receiver, mailDelivery('delivered')); // warm-up: script load, queue meta
    // MONITOR shows every command a client sent; commands run inside a script are marked "lua". Only
    // the receiver's clients count (the queue's connection; the dedup store's, unused at receipt):
    // other tests' workers still poll the server.
    const addressOf = async (client: Redis) =>
      String(await client.client('INFO')).match(/addr=(\S+)/)?.[1] ?? 'unknown';
    const receiverClients = new Set([await addressOf(connection), await addressOf(admin)]);
    // Connected in monitor mode with its error listener first: ioredis reports a command echoed
    // while MONITOR starts (workers of earlier tests reconnecting) as an 'error'.
    const monitor = new Redis(redis.port, '127.0.0.1', { monitor: true });
    monitor.on('error', () => undefined);
    await new Promise((resolve) => monitor.once('monitoring', resolve));
    const sent: string[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (receiverClients.has(source)) sent.push(String(args[0]).toLowerCase());
    });
    const delivery = mailDelivery('delivered');
    await deliver(receiver, delivery);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const forNew = sent.splice(0);
    await deliver(receiver, delivery);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const forDuplicate = sent.splice(0);
    monitor.disconnect();
    expect([forNew, forDuplicate]).toEqual([['evalsha'], ['evalsha']]);
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 2 });
  });
});
