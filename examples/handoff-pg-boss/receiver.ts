/**
 * @module
 * The receiving process: a Fastify app whose webhook routes verify, validate and enqueue each
 * delivery on pg-boss, answering 200 as soon as PostgreSQL committed the job (503 when it cannot).
 * Handlers run in worker.ts. Start both with `npx tsx start.ts` (see README.md).
 */
import { createFastifyPlugin } from '@svc/webhooks/fastify';
import { createPgBossHandoff } from '@svc/webhooks/pg-boss';
import { createPostgresStore } from '@svc/webhooks/postgres';
import Fastify from 'fastify';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createReceivers, QUEUES, readEnv } from './receivers.js';

const env = readEnv();
const { databaseUrl } = env;
const boss = new PgBoss(databaseUrl);
boss.on('error', (error) => console.error('pg-boss:', error.message));
await boss.start();
const handoff = {
  mail: createPgBossHandoff({ boss, queue: QUEUES.mail }),
  crm: createPgBossHandoff({ boss, queue: QUEUES.crm }),
};
await handoff.mail.createQueues();
await handoff.crm.createQueues();

// The receiving side does not claim: the job id (from the dedup key) is the duplicate check here.
const pool = new pg.Pool({ connectionString: databaseUrl, query_timeout: 2_000 });
pool.on('error', (error) => console.error('dedup pool:', error.message));
const dedup = createPostgresStore({ client: pool });
await dedup.migrate();
const { mail, crm } = createReceivers({
  mailSecret: env.mailSecret,
  crmSecret: env.crmSecret,
  dedup,
  handoff,
});

const app = Fastify({
  requestTimeout: 10_000,
  connectionTimeout: 15_000,
  http: { headersTimeout: 5_000, connectionsCheckingInterval: 1_000 },
});
app.register(createFastifyPlugin(mail, { path: '/webhooks/mail' }));
app.register(createFastifyPlugin(crm, { path: '/webhooks/crm' }));

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
await app.listen({ host, port });
console.error(`receiver listening on http://${host}:${port}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    await app.close(); // stop accepting deliveries first; in-flight ones finish their enqueue
    await boss.stop();
    await pool.end();
  });
}
