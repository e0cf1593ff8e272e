/**
 * Hand-off engines side by side, in one run (docs/benchmarks.md "Hand-off engines side by side"): Amazon SQS (fauxqs, an
 * emulator in this process), NATS JetStream (nats-server, file storage) and BullMQ (redis-server) on
 * 127.0.0.1. For each: acknowledgement latency over HTTP (p50, p99; one request at a time, no-op
 * handler), engine round trips per acknowledged delivery (calls the receiver makes to the engine's
 * client), and worker throughput (one in-process worker, a memory dedup store, from a full queue).
 *
 *   npx tsx bench/handoff-engines.mts        (LATENCY_N, THROUGHPUT_N to size it)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { jetstream } from '@nats-io/jetstream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createNodeListener } from '../src/adapters/node/index.js';
import { createBullmqHandoff, createBullmqWorker } from '../src/handoff/bullmq/index.js';
import { createNatsHandoff, createNatsWorker } from '../src/handoff/nats/index.js';
import { createSqsHandoff, createSqsWorker } from '../src/handoff/sqs/index.js';
import { createCrmReceiver, type HandoffTarget } from '../src/index.js';
import { connectNats, createStreams, startNats, uniqueNames } from '../test/handoff/nats/support.js';
import { createQueues, sqsClient, startSqs } from '../test/handoff/sqs/support.js';
import { CRM_SECRET, crmDelivery } from '../test/receivers/support.js';
import { startRedis } from '../test/support/servers.js';

const LATENCY_N = Number(process.env.LATENCY_N ?? 1_000);
const THROUGHPUT_N = Number(process.env.THROUGHPUT_N ?? 1_000);

async function ackLatency(handoff: HandoffTarget) {
  const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, handoff }).onAny(() => {});
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const times: number[] = [];
  for (let i = 0; i < LATENCY_N + 100; i++) {
    const delivery = crmDelivery('deal.won');
    const t0 = performance.now();
    const response = await fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    if (i >= 100) times.push(performance.now() - t0);
  }
  server.closeAllConnections();
  server.close();
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! };
}

/** Jobs per second one worker drains from a queue holding THROUGHPUT_N jobs. */
async function throughput(
  handoff: HandoffTarget,
  startWorker: (receiver: ReturnType<typeof createCrmReceiver>) => Promise<() => Promise<void>>,
) {
  let handled = 0;
  const receiver = createCrmReceiver({ secret: CRM_SECRET, logger: () => {}, handoff }).onAny(() => {
    handled++;
  });
  for (let i = 0; i < THROUGHPUT_N; i++) await receiver.handle(toRequest(crmDelivery('deal.won')));
  const t0 = performance.now();
  const stop = await startWorker(receiver);
  while (handled < THROUGHPUT_N) await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (performance.now() - t0) / 1_000;
  await stop();
  return THROUGHPUT_N / seconds;
}

const toRequest = (delivery: ReturnType<typeof crmDelivery>) =>
  new Request('http://127.0.0.1/', { method: 'POST', body: delivery.body, headers: delivery.headers });

/** Wraps `target`'s engine call to count it: calls per acknowledged delivery. */
function counting<T extends object>(client: T, method: keyof T): { client: T; calls: () => number } {
  let calls = 0;
  const original = (client[method] as (...args: unknown[]) => unknown).bind(client);
  const wrapped = Object.create(client) as T;
  (wrapped as Record<keyof T, unknown>)[method] = (...args: unknown[]) => {
    calls++;
    return original(...args);
  };
  return { client: wrapped, calls: () => calls };
}

const rows: string[] = [];
const report = (engine: string, ack: { p50: number; p99: number }, trips: number, perSecond: number) => {
  rows.push(
    `| ${engine} | ${ack.p50.toFixed(2)} | ${ack.p99.toFixed(2)} | ${trips.toFixed(2)} | ${perSecond.toFixed(0)} |`,
  );
  console.log(rows.at(-1));
};

// SQS (fauxqs 1.9.2)
{
  const server = await startSqs();
  const sqs = sqsClient(server.address);
  const latencyQueue = createQueues(server);
  const ack = await ackLatency(createSqsHandoff({ client: sqs, queueUrl: latencyQueue.queueUrl }));
  const counted = counting(sqs, 'send');
  const tripsQueue = createQueues(server);
  const tripsReceiver = createCrmReceiver({
    secret: CRM_SECRET,
    logger: () => {},
    handoff: createSqsHandoff({ client: counted.client, queueUrl: tripsQueue.queueUrl }),
  }).onAny(() => {});
  for (let i = 0; i < 200; i++) await tripsReceiver.handle(toRequest(crmDelivery('deal.won')));
  const work = createQueues(server, { visibilityTimeout: 60 });
  const perSecond = await throughput(
    createSqsHandoff({ client: sqs, queueUrl: work.queueUrl }),
    async (receiver) => {
      const worker = await createSqsWorker({
        client: sqs,
        queueUrl: work.queueUrl,
        receiver,
        signals: [],
        waitTimeSeconds: 1,
      }).start();
      return () => worker.stop();
    },
  );
  report('SQS (fauxqs 1.9.2, in process)', ack, counted.calls() / 200, perSecond);
  sqs.destroy();
  await server.stop();
}

// NATS JetStream (nats-server, file storage)
{
  const server = await startNats();
  const nc = await connectNats(server.url);
  const js = jetstream(nc);
  const names = uniqueNames();
  await createStreams(nc, names);
  const handoff = createNatsHandoff({ js, subjectPrefix: names.prefix });
  const ack = await ackLatency(handoff);
  const counted = counting(js, 'publish');
  const tripsReceiver = createCrmReceiver({
    secret: CRM_SECRET,
    logger: () => {},
    handoff: createNatsHandoff({ js: counted.client, subjectPrefix: names.prefix }),
  }).onAny(() => {});
  for (let i = 0; i < 200; i++) await tripsReceiver.handle(toRequest(crmDelivery('deal.won')));
  const work = uniqueNames();
  await createStreams(nc, work);
  const perSecond = await throughput(
    createNatsHandoff({ js, subjectPrefix: work.prefix }),
    async (receiver) => {
      const worker = await createNatsWorker({
        js,
        receiver,
        stream: work.stream,
        deadLetterStream: work.deadLetterStream,
        subjectPrefix: work.prefix,
        signals: [],
        concurrency: 10,
      }).start();
      return () => worker.stop();
    },
  );
  report(`NATS JetStream (nats-server, file storage)`, ack, counted.calls() / 200, perSecond);
  await nc.close();
  await server.close();
}

// BullMQ (redis-server)
{
  const redis = await startRedis();
  const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  const queue = new Queue('bench-ack', { connection });
  const ack = await ackLatency(createBullmqHandoff({ queue }));
  const counted = counting(queue, 'add');
  const tripsReceiver = createCrmReceiver({
    secret: CRM_SECRET,
    logger: () => {},
    handoff: createBullmqHandoff({ queue: counted.client }),
  }).onAny(() => {});
  for (let i = 0; i < 200; i++) await tripsReceiver.handle(toRequest(crmDelivery('deal.won')));
  const work = new Queue('bench-work', { connection });
  const perSecond = await throughput(createBullmqHandoff({ queue: work }), async (receiver) => {
    const worker = createBullmqWorker(receiver, {
      queueName: 'bench-work',
      connection,
      concurrency: 10,
      shutdownSignals: [],
    });
    return () => worker.close();
  });
  report('BullMQ (redis-server)', ack, counted.calls() / 200, perSecond);
  await queue.close();
  await work.close();
  connection.disconnect();
  await redis.close();
}

console.log(
  `\n${cpus().length} cores (${cpus()[0]?.model}), load ${loadavg()[0]!.toFixed(1)}, Node ${process.versions.node}, ${LATENCY_N} acks, ${THROUGHPUT_N} jobs\n`,
);
console.log(
  '| engine | ack p50 ms | ack p99 ms | engine calls per ack | worker jobs/s (1 worker, concurrency 10) |',
);
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(row);
process.exit(0);
