/**
 * The SQS hand-off under faults, with fauxqs and the workers in processes of their own: CRM
 * deliveries over real HTTP (each sender retrying until a 2xx, as the CRM does), the engine paused
 * with SIGSTOP mid-load (the receiver answers 503 and the retries are accepted after SIGCONT), and a
 * worker SIGKILLed under load, twice, and restarted. Every acknowledged delivery runs its handler to
 * the end exactly once: none lost, none run twice.
 *
 * SQS_FAULT_DELIVERIES sets the count (300 by default, to keep CI short; 3,000 was run by hand,
 * docs/handoff-sqs.md). fauxqs keeps its queues in memory, so killing the emulator itself shows
 * nothing about SQS, which is not a process a receiver restarts: the engine faults played are a
 * paused and an unreachable endpoint.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createCrmReceiver } from '@svc/webhooks';
import { createSqsHandoff } from '@svc/webhooks/sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, type Delivery } from '../../receivers/support.js';
import { type RedisServer, startRedis } from '../../support/servers.js';
import { post, serve, until } from '../pg-boss/support.js';
import { type WorkerProcess, workerProcesses } from '../support/worker-processes.js';
import { FAUXQS_VERSION, type SqsProcess, spawnSqs, sqsClient, uniqueName } from './support.js';

const WORKER = fileURLToPath(new URL('./fixtures/worker-process.ts', import.meta.url));
const DELIVERIES = Number(process.env.SQS_FAULT_DELIVERIES ?? 300);

describe('SQS hand-off: engine paused, workers killed', () => {
  let sqs: SqsProcess;
  let redis: RedisServer;
  let client: SQSClient;
  const { starts, dones, workers, spawnWorker, rerunAfterKill } = workerProcesses(WORKER);
  beforeAll(async () => {
    [sqs, redis] = await Promise.all([spawnSqs(), startRedis()]);
    client = sqsClient(sqs.address);
    console.info(
      `SQS fault suite: ${DELIVERIES} deliveries on fauxqs ${FAUXQS_VERSION} (Node ${process.versions.node})`,
    );
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    sqs?.child.kill('SIGCONT');
    sqs?.child.kill('SIGKILL');
    client?.destroy();
    await redis?.close();
  });

  it(`${DELIVERIES} deliveries: engine paused mid-load, a worker SIGKILLed twice under load: 0 lost, 0 run twice`, async () => {
    const dead = await client.send(new CreateQueueCommand({ QueueName: uniqueName('faults-dead') }));
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dead.QueueUrl!, AttributeNames: ['QueueArn'] }),
    );
    const work = await client.send(
      new CreateQueueCommand({
        QueueName: uniqueName('faults'),
        Attributes: {
          VisibilityTimeout: '4',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes!.QueueArn, maxReceiveCount: '50' }),
        },
      }),
    );
    const queueUrl = work.QueueUrl!;
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      handoff: createSqsHandoff({ client, queueUrl, enqueueTimeoutMs: 500 }),
    });
    const http = await serve(receiver);
    const env = {
      SQS_ENDPOINT: sqs.address,
      QUEUE_URL: queueUrl,
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      CRM_SECRET,
      LEASE_MS: '3000',
      HANDLER_MS: '300',
      CONCURRENCY: '10',
    };
    const [first] = await Promise.all([spawnWorker(env), spawnWorker(env)]);

    let refused = 0;
    /** The sender: retries a delivery until it is acknowledged. */
    const send = async (delivery: Delivery) => {
      for (;;) {
        const { status } = await post(http.url, delivery);
        if (status === 200) return;
        refused++;
        await sleep(100);
      }
    };
    const deliveries = Array.from({ length: DELIVERIES }, () => crmDelivery('deal.won'));
    const sendAll = (list: Delivery[]) =>
      (async () => {
        for (let i = 0; i < list.length; i += 20) await Promise.all(list.slice(i, i + 20).map(send));
      })();
    // The first half before the pause; the second half sent while the engine is stopped, so the
    // pause meets deliveries however fast the machine is.
    const half = Math.floor(DELIVERIES / 2);
    const sendingFirst = sendAll(deliveries.slice(0, half));

    // A worker is killed while its handlers run, then the engine pauses for 1.5 s, then another kill.
    const live = new Set(workers);
    /** Handlers running in each worker killed, when it was killed. */
    const kills: number[] = [];
    const killed: WorkerProcess[] = [];
    const killWhileRunning = async () => {
      const busy = () => [...live].find((w) => w.running.size > 0);
      await until(() => busy() !== undefined, 10_000);
      const target = busy() ?? first!;
      kills.push(target.running.size);
      killed.push(target);
      live.delete(target);
      target.child.kill('SIGKILL');
      await target.exited;
      live.add(await spawnWorker(env));
    };
    await until(() => starts.size >= DELIVERIES / 6, 60_000);
    await killWhileRunning();
    await until(() => starts.size >= DELIVERIES / 3, 60_000);
    await sendingFirst;
    sqs.child.kill('SIGSTOP');
    const sendingSecond = sendAll(deliveries.slice(half));
    await sleep(1_500);
    sqs.child.kill('SIGCONT');
    await killWhileRunning();
    await sendingSecond;
    expect(await until(() => dones.size === DELIVERIES, 120_000)).toBe(true);
    await sleep(4_500); // past a visibility timeout: a message handed out again would run now
    await http.close();
    // A kill between a handler's end and its claim's completion runs it again (at least once: the
    // effect of this fixture's handler is outside the store); every other second run is a defect.
    const again = [...dones.entries()].filter(([, n]) => n > 1);
    const twice = again.filter(([id]) => !rerunAfterKill(id, killed));
    console.info(
      `SQS faults: ${DELIVERIES} acknowledged, ${dones.size} handled, ${twice.length} run twice (${again.length - twice.length} more after a kill before their completion), ${refused} attempts refused (503) while paused, ${[...starts.values()].reduce((a, b) => a + b, 0) - DELIVERIES} handler starts cut short; handlers running in the killed workers: ${kills.join(', ')}`,
    );
    expect(refused).toBeGreaterThan(0);
    expect(starts.size).toBe(DELIVERIES);
    expect(kills.every((n) => n > 0)).toBe(true);
    expect(deliveries.filter((d) => !dones.has(d.deliveryId))).toEqual([]);
    expect(twice).toEqual([]);
    // The `handled` lines the excuse above reads are printed (a fixture that never printed them would
    // excuse every second run of a killed worker's delivery).
    expect(new Set(workers.flatMap((w) => [...w.handled])).size).toBeGreaterThan(DELIVERIES / 2);
  }, 180_000);
});
