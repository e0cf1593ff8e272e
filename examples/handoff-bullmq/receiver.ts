/**
 * @module
 * The receiving process: an Express app whose webhook routes verify, validate and enqueue each
 * delivery on BullMQ, answering 200 as soon as Redis stored the job (503 when it cannot). Handlers
 * run in worker.ts. Start both with `npx tsx start.ts` (see README.md).
 */
import { createBullmqHandoff } from '@svc/webhooks/bullmq';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { Queue } from 'bullmq';
import express from 'express';
import { Redis } from 'ioredis';
import { createReceivers, PREFIX, QUEUES, readEnv } from './receivers.js';

const env = readEnv();
const connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
connection.on('error', (error) => console.error('redis:', error.message));
const queues = {
  mail: new Queue(QUEUES.mail, { connection, prefix: PREFIX }),
  crm: new Queue(QUEUES.crm, { connection, prefix: PREFIX }),
};
const { mail, crm } = createReceivers({
  mailSecret: env.mailSecret,
  crmSecret: env.crmSecret,
  handoff: {
    mail: createBullmqHandoff({ queue: queues.mail }),
    crm: createBullmqHandoff({ queue: queues.crm }),
  },
});

const app = express();
app.post('/webhooks/mail', createExpressMiddleware(mail));
app.post('/webhooks/crm', createExpressMiddleware(crm));

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, host, () => console.error(`receiver listening on http://${host}:${port}`));
// Slow clients: the headers within 5 s, the whole request within 10 s (the services wait 10 s).
server.headersTimeout = 5_000;
server.requestTimeout = 10_000;

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    // Stop accepting deliveries first; in-flight ones finish their enqueue.
    server.close(async () => {
      await Promise.all([queues.mail.close(), queues.crm.close()]);
      connection.disconnect();
    });
    server.closeIdleConnections();
  });
}
