/**
 * @module
 * The worker process: runs the handlers of the jobs receiver.ts enqueued, with BullMQ's retries and
 * backoff, and prints one JSON line per handled event on stdout. SIGTERM: stops taking jobs,
 * finishes the running ones (10 s at most), then exits.
 */
import { createBullmqWorker } from '@svc/webhooks/bullmq';
import { createRedisStore } from '@svc/webhooks/redis';
import { Redis } from 'ioredis';
import { createReceivers, PREFIX, QUEUES, readEnv } from './receivers.js';

const env = readEnv();
const connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
connection.on('error', (error) => console.error('redis:', error.message));
const { mail, crm } = createReceivers({
  mailSecret: env.mailSecret,
  crmSecret: env.crmSecret,
  dedup: createRedisStore({ client: connection }),
});

// Two workers in one process: the signal is handled here, once, for both.
const workers = [
  createBullmqWorker(mail, { queueName: QUEUES.mail, connection, prefix: PREFIX, shutdownSignals: [] }),
  createBullmqWorker(crm, { queueName: QUEUES.crm, connection, prefix: PREFIX, shutdownSignals: [] }),
];
await Promise.all(workers.map(({ worker }) => worker.waitUntilReady()));
console.error('worker running');

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    connection.disconnect();
  });
}
