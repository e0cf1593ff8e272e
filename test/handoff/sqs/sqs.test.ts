/**
 * The SQS hand-off against fauxqs (SQS's own protocol, in this process on 127.0.0.1): the reference
 * emitters end to end through a handler outage, forged and hand-written messages, FIFO order across
 * retries and FIFO duplicates, dead letters with list and re-drive, the Lambda batch handler, and the
 * queue settings a worker refuses at start.
 */
import { ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import {
  createSqsHandoff,
  createSqsLambdaHandler,
  createSqsWorker,
  listSqsDeadLetters,
  redriveSqsDeadLetters,
  type SqsRecordLike,
  type SqsWorker,
} from '@svc/webhooks/sqs';
import { createCrmEmitter, createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import type { FauxqsServer } from 'fauxqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../../src/handoff/job/types.js';
import { CRM_SECRET, crmDelivery } from '../../receivers/support.js';
import { resigned } from '../job-mac.js';
import { post, serve, until } from '../pg-boss/support.js';
import {
  createQueues,
  FAUXQS_VERSION,
  sqsClient,
  startSqs,
  uniqueName,
  workQueueAttributes,
} from './support.js';

const START = Date.parse('2025-03-01T12:00:00.000Z');
let server: FauxqsServer;
let client: SQSClient;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startSqs();
  client = sqsClient(server.address);
  console.info(`SQS hand-off suite on fauxqs ${FAUXQS_VERSION} (Node ${process.versions.node})`);
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

const signal = () => new AbortController().signal;

async function startWorker(options: Parameters<typeof createSqsWorker>[0]): Promise<SqsWorker> {
  const worker = await createSqsWorker({
    waitTimeSeconds: 1,
    signals: [],
    backoffSeconds: 0,
    ...options,
  }).start();
  cleanup.push(() => worker.stop());
  return worker;
}

/** Every message body in a queue, read without consuming (fauxqs's inspection). */
const bodiesIn = (name: string) => {
  const queue = server.inspectQueue(name)!;
  return [
    ...queue.messages.ready,
    ...queue.messages.delayed,
    ...queue.messages.inflight.map((m) => m.message),
  ];
};

/** A signed CRM job as a receiver writes it, for hand-written messages. */
function crmJob(event = 'deal.won', data?: unknown): HandoffJob {
  const delivery = crmDelivery(event, data === undefined ? {} : { data });
  return resigned(
    {
      v: 2,
      service: 'crm',
      deliveryId: delivery.deliveryId,
      event,
      dedupKey: `crm:delivery:${delivery.deliveryId}`,
      receivedAt: Date.now(),
      secretIndex: 0,
      headers: { 'x-svc-event': event, 'x-svc-delivery': delivery.deliveryId },
      body: Buffer.from(delivery.body).toString('base64'),
      mac: '',
    },
    CRM_SECRET,
  );
}

describe('SQS hand-off', () => {
  it('email emitter end to end: every delivery acknowledged at attempt 1 through a handler outage, each handled once', async () => {
    const { queueUrl } = createQueues(server, { maxReceiveCount: 50 });
    const clock = createVirtualClock({ start: START });
    let outage = true;
    let failedRuns = 0;
    const effects = new Map<string, number>();
    const emitter = createMailEmitter({ clock, seed: 'sqs', handler: (request) => receiver.handle(request) });
    const hook = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['opened'] });
    const receiver = createMailReceiver({
      secret: hook.secret,
      handoff: createSqsHandoff({ client, queueUrl }),
    });
    receiver.on('opened', (event) => {
      if (outage) {
        failedRuns++;
        throw new Error('database unavailable');
      }
      effects.set(event.deliveryId, (effects.get(event.deliveryId) ?? 0) + 1);
    });
    await startWorker({ client, queueUrl, receiver, concurrency: 5 });
    const ids: string[] = [];
    for (let t = 0; t < 40_000; t += 2_000) {
      const [delivery] = await emitter.emit('opened');
      ids.push(delivery!.id);
      await clock.advance(2_000);
    }
    await clock.runAll();
    expect(
      ids.map((id) => [emitter.getDelivery(id).status, emitter.getDelivery(id).attempts.length]),
    ).toEqual(ids.map(() => ['succeeded', 1]));
    expect(emitter.getWebhook(hook.id)).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    expect(await until(() => failedRuns >= ids.length)).toBe(true);
    outage = false;
    expect(await until(() => effects.size === ids.length)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([...effects.values()].every((n) => n === 1)).toBe(true);
  });

  it('CRM emitter over HTTP: acknowledged once SQS has the message; the job in the body is the authenticated job', async () => {
    const { queueUrl, queueName } = createQueues(server);
    const clock = createVirtualClock({ start: START });
    const emitter = createCrmEmitter({
      clock,
      seed: 'sqs-crm',
      handler: (request) => receiver.handle(request),
    });
    const hook = emitter.createWebhook({
      name: 'sqs',
      url: 'https://hooks.example.com/crm',
      events: ['deal.won'],
    });
    const receiver = createCrmReceiver({
      secret: hook.secret,
      handoff: createSqsHandoff({ client, queueUrl }),
    });
    const handled: string[] = [];
    receiver.on('deal.won', (event) => {
      handled.push(event.deliveryId);
    });
    const [delivery] = await emitter.emit('deal.won');
    await clock.runAll();
    expect(emitter.getDelivery(delivery!.id).status).toBe('succeeded');
    const [message] = bodiesIn(queueName);
    const job = JSON.parse(message!.body) as HandoffJob;
    expect(job).toMatchObject({ v: 2, service: 'crm', event: 'deal.won', deliveryId: delivery!.id });
    expect(job.mac).toMatch(/^[0-9a-f]{64}$/);
    await startWorker({ client, queueUrl, receiver });
    expect(await until(() => handled.length === 1)).toBe(true);
    expect(await until(() => bodiesIn(queueName).length === 0)).toBe(true);
  });

  it('forged and hand-written messages never run a handler: dead-lettered at once with job_invalid', async () => {
    const { queueUrl, deadLetterQueueUrl } = createQueues(server, { maxReceiveCount: 10 });
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    let runs = 0;
    receiver.on('deal.won', () => {
      runs++;
    });
    const genuine = crmJob();
    const forged = [
      'not json at all',
      JSON.stringify({ hello: 'world' }),
      JSON.stringify({ ...genuine, deliveryId: 'another', dedupKey: 'crm:delivery:another' }), // changed after signing
      JSON.stringify(resigned(genuine, 'whsec_an_attacker_secret_of_real_length_00')), // another secret
    ];
    for (const body of forged)
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    await startWorker({ client, queueUrl, receiver });
    let letters: Awaited<ReturnType<typeof listSqsDeadLetters>> = [];
    expect(
      await until(async () => {
        letters = await listSqsDeadLetters({ client, deadLetterQueueUrl });
        return letters.length === forged.length;
      }),
    ).toBe(true);
    expect(runs).toBe(0);
    expect(letters.every((letter) => letter.reason?.startsWith('job_invalid: '))).toBe(true);
    // Each was received once: refused at its first attempt, not retried.
    expect(letters.map((letter) => letter.receiveCount).every((n) => n <= 2)).toBe(true);
  });

  it('dead letters after maxReceiveCount with the last error; re-driven after the fix, each runs once', async () => {
    const { queueUrl, queueName, deadLetterQueueUrl } = createQueues(server, { maxReceiveCount: 2 });
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    let broken = true;
    const runs = new Map<string, number>();
    receiver.on('deal.won', (event) => {
      runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1);
      if (broken) throw new Error('downstream refused');
    });
    const handoff = createSqsHandoff({ client, queueUrl });
    const jobs = [crmJob(), crmJob()];
    for (const job of jobs) await handoff.enqueue(job, { signal: signal() });
    const worker = await startWorker({ client, queueUrl, receiver });
    let letters: Awaited<ReturnType<typeof listSqsDeadLetters>> = [];
    expect(
      await until(async () => {
        letters = await listSqsDeadLetters({ client, deadLetterQueueUrl });
        return letters.length === 2;
      }),
    ).toBe(true);
    expect(bodiesIn(queueName)).toHaveLength(0);
    expect(letters.map((l) => l.deliveryId).sort()).toEqual(jobs.map((j) => j.deliveryId).sort());
    expect(letters.every((l) => l.reason?.startsWith('handler_failed: '))).toBe(true);
    expect([...runs.values()]).toEqual([2, 2]);
    broken = false;
    expect(await redriveSqsDeadLetters({ client, deadLetterQueueUrl, queueUrl })).toBe(2);
    expect(await until(() => [...runs.values()].every((n) => n === 3))).toBe(true);
    expect(
      await until(async () => (await listSqsDeadLetters({ client, deadLetterQueueUrl })).length === 0),
    ).toBe(true);
    await worker.stop();
    expect([...runs.values()]).toEqual([3, 3]);
  });

  it('FIFO: per-deal order kept across retries; other deals run meanwhile; the group and dedup ids are the documented ones', async () => {
    const { queueUrl, queueName } = createQueues(server, { fifo: true, maxReceiveCount: 10 });
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    const order: string[] = [];
    let failuresLeft = 2;
    receiver.on('deal.stage_changed', (event) => {
      const { deal_id, stage_id } = event.data as { deal_id: string; stage_id: string };
      if (deal_id === 'd_1' && stage_id === 's_1' && failuresLeft-- > 0) throw new Error('not yet');
      order.push(`${deal_id}/${stage_id}`);
    });
    const handoff = createSqsHandoff({ client, queueUrl });
    expect(handoff.fifo).toBe(true);
    const jobs = [
      crmJob('deal.stage_changed', { deal_id: 'd_1', title: 'A', stage_id: 's_1' }),
      crmJob('deal.stage_changed', { deal_id: 'd_2', title: 'B', stage_id: 's_1' }),
      crmJob('deal.stage_changed', { deal_id: 'd_1', title: 'A', stage_id: 's_2' }),
      crmJob('deal.stage_changed', { deal_id: 'd_1', title: 'A', stage_id: 's_3' }),
    ];
    for (const job of jobs) await handoff.enqueue(job, { signal: signal() });
    const groups = new Map(bodiesIn(queueName).map((m) => [m.messageDeduplicationId, m.messageGroupId]));
    expect(jobs.map((job) => groups.get(job.dedupKey))).toEqual([
      'deal:d_1',
      'deal:d_2',
      'deal:d_1',
      'deal:d_1',
    ]);
    await startWorker({ client, queueUrl, receiver, concurrency: 10 });
    expect(await until(() => order.length === 4)).toBe(true);
    expect(failuresLeft).toBeLessThan(0);
    expect(order.filter((o) => o.startsWith('d_1/'))).toEqual(['d_1/s_1', 'd_1/s_2', 'd_1/s_3']);
    expect(order.indexOf('d_2/s_1')).toBeLessThan(order.indexOf('d_1/s_1')); // not held behind d_1
  });

  it('FIFO: a duplicate delivery is dropped by the broker, and one past its window by the claim', async () => {
    const { queueUrl, queueName } = createQueues(server, { fifo: true });
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      handoff: createSqsHandoff({ client, queueUrl }),
    });
    const http = await serve(receiver);
    cleanup.push(() => http.close());
    let runs = 0;
    receiver.on('deal.won', () => {
      runs++;
    });
    const delivery = crmDelivery('deal.won');
    const answers = await Promise.all([1, 2, 3].map(() => post(http.url, delivery)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(bodiesIn(queueName)).toHaveLength(1); // SQS dropped the copies within its 5 minutes
    await startWorker({ client, queueUrl, receiver });
    expect(await until(() => runs === 1 && bodiesIn(queueName).length === 0)).toBe(true);
    // A copy after the deduplication interval: a new message (another dedup id), settled by the claim.
    const again = JSON.stringify(
      resigned(
        {
          v: 2,
          service: 'crm',
          deliveryId: delivery.deliveryId,
          event: 'deal.won',
          dedupKey: `crm:delivery:${delivery.deliveryId}`,
          receivedAt: Date.now(),
          secretIndex: 0,
          headers: { 'x-svc-event': 'deal.won', 'x-svc-delivery': delivery.deliveryId },
          body: Buffer.from(delivery.body).toString('base64'),
          mac: '',
        },
        CRM_SECRET,
      ),
    );
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: again,
        MessageGroupId: 'deal:d_1',
        MessageDeduplicationId: 'after-the-window',
      }),
    );
    expect(await until(() => bodiesIn(queueName).length === 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(runs).toBe(1);
  });

  it('refuses at start: FIFO with content-based deduplication, no redrive policy, a visibility timeout under the handler budget', async () => {
    const receiver = createCrmReceiver({ secret: CRM_SECRET });
    const dead = server.createQueue(`${uniqueName('dead')}.fifo`, { attributes: { FifoQueue: 'true' } });
    const contentBased = server.createQueue(`${uniqueName('cbd')}.fifo`, {
      attributes: {
        ...workQueueAttributes(dead.queueArn, { fifo: true }),
        ContentBasedDeduplication: 'true',
      },
    });
    const noRedrive = server.createQueue(uniqueName('plain'));
    const shortVisibility = createQueues(server, { visibilityTimeout: 5 });
    const start = (queueUrl: string, extra: { timeoutMs?: number } = {}) =>
      createSqsWorker({ client, queueUrl, receiver, signals: [], ...extra }).start();
    await expect(start(contentBased.queueUrl)).rejects.toMatchObject({
      code: 'options_invalid',
      message: expect.stringContaining('ContentBasedDeduplication'),
    });
    await expect(start(noRedrive.queueUrl)).rejects.toMatchObject({
      code: 'options_invalid',
      message: expect.stringContaining('redrive policy'),
    });
    await expect(start(shortVisibility.queueUrl)).rejects.toMatchObject({
      code: 'options_invalid',
      message: expect.stringContaining('VisibilityTimeout'),
    });
    await expect(start(shortVisibility.queueUrl, { timeoutMs: 6_000 })).rejects.toMatchObject({
      code: 'options_invalid',
    });
    const worker = await start(shortVisibility.queueUrl, { timeoutMs: 4_000 });
    await worker.stop();
  });

  it('caps the delivery body at what a 256 KiB message carries: a larger maxBodyBytes is refused, a larger body gets 413', async () => {
    const { queueUrl } = createQueues(server);
    const handoff = createSqsHandoff({ client, queueUrl });
    expect(handoff.maxBodyBytes).toBe(184_320); // (262 144 − 16 384) × 3/4: 180 KiB
    expect(() => createCrmReceiver({ secret: CRM_SECRET, handoff, maxBodyBytes: 200_000 })).toThrow(
      /maxBodyBytes/,
    );
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff });
    const big = crmDelivery('deal.won', { data: { deal_id: 'd_1', title: 'x'.repeat(190_000), value: 1 } });
    const largest = crmDelivery('deal.won', {
      data: { deal_id: 'd_1', title: 'x'.repeat(184_000), value: 1 },
    });
    const http = await serve(receiver);
    cleanup.push(() => http.close());
    expect((await post(http.url, big)).status).toBe(413);
    expect((await post(http.url, largest)).status).toBe(200);
  });
});

describe('SQS Lambda handler', () => {
  /** Records as Lambda hands them over, received from a real queue. */
  async function records(queueUrl: string, jobs: HandoffJob[]): Promise<SqsRecordLike[]> {
    const handoff = createSqsHandoff({ client, queueUrl });
    for (const job of jobs) await handoff.enqueue(job, { signal: signal() });
    const received: SqsRecordLike[] = [];
    while (received.length < jobs.length) {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'MessageGroupId'],
        }),
      );
      for (const m of Messages)
        received.push({
          messageId: m.MessageId!,
          body: m.Body!,
          eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueUrl.split('/').pop()}`,
          attributes: {
            ApproximateReceiveCount: m.Attributes!.ApproximateReceiveCount!,
            MessageGroupId: m.Attributes?.MessageGroupId,
          },
        });
    }
    return received;
  }

  it('returns only the failed records of a batch; settled ones are duplicates when Lambda delivers them again', async () => {
    const { queueUrl } = createQueues(server);
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    const failing = new Set<string>();
    const runs = new Map<string, number>();
    receiver.on('deal.won', (event) => {
      runs.set(event.deliveryId, (runs.get(event.deliveryId) ?? 0) + 1);
      if (failing.has(event.deliveryId)) throw new Error('downstream refused');
    });
    const jobs = Array.from({ length: 6 }, () => crmJob());
    failing.add(jobs[1]!.deliveryId);
    failing.add(jobs[4]!.deliveryId);
    const batch = await records(queueUrl, jobs);
    const forged = { ...batch[0]!, messageId: 'forged-1', body: '{"v":2}' };
    const handler = createSqsLambdaHandler({ receiver, maxReceiveCount: 5 });
    const result = await handler({ Records: [...batch, forged] });
    const idOf = (deliveryId: string) =>
      batch.find((r) => (JSON.parse(r.body) as HandoffJob).deliveryId === deliveryId)!.messageId;
    expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      [idOf(jobs[1]!.deliveryId), idOf(jobs[4]!.deliveryId), 'forged-1'].sort(),
    );
    // The whole batch again (a mapping without ReportBatchItemFailures): the settled ones run nothing.
    failing.clear();
    const again = await handler({ Records: batch });
    expect(again.batchItemFailures).toEqual([]);
    expect([...runs.values()].sort()).toEqual([1, 1, 1, 1, 2, 2]);
  });

  it('FIFO: the first failed record comes back with every record after it, unrun', async () => {
    const { queueUrl } = createQueues(server, { fifo: true });
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    const ran: string[] = [];
    receiver.on('deal.stage_changed', (event) => {
      const { stage_id } = event.data as { stage_id: string };
      ran.push(stage_id);
      if (stage_id === 's_2') throw new Error('not yet');
    });
    const jobs = ['s_1', 's_2', 's_3'].map((stage_id) =>
      crmJob('deal.stage_changed', { deal_id: 'd_9', title: 'A', stage_id }),
    );
    // fauxqs hands out one message per group at a time; Lambda's batches hold several, in order.
    const batch = jobs.map((job, i) => ({
      messageId: `m-${i}`,
      body: JSON.stringify(job),
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueUrl.split('/').pop()}`,
      attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'deal:d_9' },
    }));
    const result = await createSqsLambdaHandler({ receiver })({ Records: batch });
    expect(result.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([
      batch[1]!.messageId,
      batch[2]!.messageId,
    ]);
    expect(ran).toEqual(['s_1', 's_2']);
  });

  it('with a dead-letter queue: a forged record goes there at once and is not returned', async () => {
    const { queueUrl, deadLetterQueueUrl } = createQueues(server);
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {} });
    receiver.on('deal.won', () => {});
    const [record] = await records(queueUrl, [crmJob()]);
    const forged = { ...record!, messageId: 'forged-2', body: 'hello' };
    const result = await createSqsLambdaHandler({ receiver, client, deadLetterQueueUrl })({
      Records: [record!, forged],
    });
    expect(result.batchItemFailures).toEqual([]);
    const letters = await listSqsDeadLetters({ client, deadLetterQueueUrl });
    expect(letters).toHaveLength(1);
    expect(letters[0]!.reason).toMatch(/^job_invalid: /);
  });
});
