/**
 * The one worker loop (src/handoff/worker-loop.ts) on a real engine: SQS (fauxqs, in this process).
 * Its shutdown while jobs run, through the SQS worker: the jobs that finish within the bound are
 * deleted, the ones that honour their aborted signal are handed back and run once elsewhere, a
 * handler that ignores its signal no longer holds `stop()` (it settles itself when it ends), and no
 * job is claimed after `stop()`: none runs twice, none is lost. Then the loop itself over a small
 * engine of SQS calls: `runOnce` drains, `wake` fetches before the poll delay.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createMailReceiver } from '@svc/webhooks';
import { createSqsHandoff, createSqsWorker } from '@svc/webhooks/sqs';
import type { FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobAction } from '../../src/handoff/job-action.js';
import { jobOfBody, type LoopJob } from '../../src/handoff/run-and-settle.js';
import { createWorkerLoop } from '../../src/handoff/worker-loop.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { until } from './pg-boss/support.js';
import { createQueues, sqsClient, startSqs } from './sqs/support.js';

let server: FauxqsServer;
let client: SQSClient;

beforeAll(async () => {
  server = await startSqs();
  client = sqsClient(server.address);
});
afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

/** A promise with its resolve, for handlers the test lets go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const inQueue = (name: string) => {
  const { ready, delayed, inflight } = server.inspectQueue(name)!.messages;
  return ready.length + delayed.length + inflight.length;
};

describe('the worker loop, on SQS', () => {
  it('shutdown while jobs run: finished ones deleted, aborted ones handed back and run once, an ignored signal does not hold stop, nothing claimed after it', async () => {
    const { queueUrl, queueName, deadLetterQueueUrl } = createQueues(server, { maxReceiveCount: 5 });
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: createSqsHandoff({ client, queueUrl }),
    });
    const starts = new Map<string, number>();
    const handled = new Map<string, number>();
    /** The first worker's handlers: how each of the first four behaves. */
    const plans = new Map<string, 'finish' | 'honour' | 'ignore'>();
    const released = gate();
    const ignoring = gate();
    let secondWorker = false;
    receiver.on('delivered', async (event, { signal }) => {
      const id = event.deliveryId;
      starts.set(id, (starts.get(id) ?? 0) + 1);
      const plan = secondWorker ? 'finish' : (plans.get(id) ?? 'finish');
      if (!secondWorker && plan === 'finish') await released.opened;
      if (plan === 'honour')
        await new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('aborted'))),
        );
      if (plan === 'ignore') await ignoring.opened;
      handled.set(id, (handled.get(id) ?? 0) + 1);
    });
    const codes: string[] = [];
    receiver.onError((error) => void codes.push((error as { code?: string }).code ?? 'none'));
    const deliveries = Array.from({ length: 8 }, () => mailDelivery('delivered'));
    const [first, second, third, fourth] = deliveries.slice(0, 4).map((d) => d.deliveryId);
    plans.set(first!, 'finish').set(second!, 'finish').set(third!, 'honour').set(fourth!, 'ignore');
    // The first four are in the queue alone, so the first worker (4 slots) takes exactly them.
    for (const delivery of deliveries.slice(0, 4))
      expect((await deliver(receiver, delivery)).status).toBe(200);
    const worker = await createSqsWorker({
      client,
      queueUrl,
      receiver,
      concurrency: 4,
      waitTimeSeconds: 1,
      busyDelayMs: 1_000,
      shutdownTimeoutMs: 200,
      signals: [],
    }).start();
    expect(await until(() => starts.size === 4)).toBe(true);
    for (const delivery of deliveries.slice(4)) expect((await deliver(receiver, delivery)).status).toBe(200);

    const stopped = worker.stop();
    released.open(); // the two that finish do so within the bound
    await stopped; // the honouring one aborted; the ignoring one left running past the second bound
    expect(handled.get(third!)).toBeUndefined();
    expect(handled.get(fourth!)).toBeUndefined();
    // stop() did not wait for the ignoring handler's budget to run out (a handler_timeout).
    expect(codes).not.toContain('handler_timeout');
    expect([...starts.keys()].sort()).toEqual([first, second, third, fourth].sort()); // nothing claimed after stop()

    ignoring.open(); // it ends in its own time and settles itself
    expect(await until(() => handled.get(fourth!) === 1)).toBe(true);
    secondWorker = true;
    const next = await createSqsWorker({
      client,
      queueUrl,
      receiver,
      waitTimeSeconds: 1,
      signals: [],
    }).start();
    expect(await until(() => handled.size === 8 && inQueue(queueName) === 0)).toBe(true);
    await next.stop();

    // None lost, none run twice: every delivery handled once; only the aborted one started again.
    expect([...handled.values()]).toEqual(Array(8).fill(1));
    expect(starts.get(third!)).toBe(2);
    for (const id of [first, second, fourth]) expect(starts.get(id!)).toBe(1);
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({ QueueUrl: deadLetterQueueUrl, WaitTimeSeconds: 0 }),
    );
    expect(Messages).toEqual([]);
  });

  it('the loop itself over SQS calls: runOnce drains what is there, wake fetches before the poll delay, a failed fetch is reported and retried', async () => {
    const { queueUrl } = createQueues(server);
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: createSqsHandoff({ client, queueUrl }),
    });
    const handled: string[] = [];
    const reports: string[] = [];
    receiver.on('delivered', (event) => void handled.push(event.deliveryId));
    receiver.onError((error, info) => void reports.push(`${info.phase}: ${(error as Error).message}`));
    interface Job extends LoopJob {
      receipt: string;
    }
    let failNext = false;
    const loop = createWorkerLoop<Job>({
      receiver,
      concurrency: 2,
      shutdownTimeoutMs: 1_000,
      signals: [],
      pollMs: 3_600_000, // only a wake-up fetches again
      fetchName: 'test receive',
      async fetch(max) {
        if (failNext) {
          failNext = false;
          throw new Error('receive refused');
        }
        const { Messages = [] } = await client.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: max, WaitTimeSeconds: 0 }),
        );
        return Messages.map((m) => ({
          receipt: m.ReceiptHandle!,
          label: `message ${m.MessageId}`,
          data: jobOfBody(m.Body!),
          attempt: 1,
        }));
      },
      async settle(job: Job, action: JobAction) {
        if (action.type !== 'done') return 'retried';
        await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: job.receipt }));
        return 'done';
      },
    });
    const deliveries = Array.from({ length: 5 }, () => mailDelivery('delivered'));
    for (const delivery of deliveries) await deliver(receiver, delivery);
    // Two slots: five jobs take three fetches with work, then one that finds none.
    expect(await loop.runOnce()).toBe(5);
    expect(handled.sort()).toEqual(deliveries.map((d) => d.deliveryId).sort());

    loop.start();
    // The first fetch found nothing: the loop waits its hour-long poll delay until woken.
    const late = mailDelivery('delivered');
    await deliver(receiver, late);
    loop.wake();
    expect(await until(() => handled.includes(late.deliveryId))).toBe(true);
    failNext = true;
    loop.wake();
    expect(await until(() => reports.includes('job: receive refused'))).toBe(true);
    await loop.stop();
  });
});
