/**
 * @module
 * The worker process: runs the handlers of the jobs receiver.ts enqueued, with pg-boss's retries
 * and backoff, and prints one JSON line per handled event on stdout. SIGTERM: stops taking jobs,
 * finishes the running ones (10 s at most), then exits.
 */
import { createPgBossWorker } from '@svc/webhooks/pg-boss';
import { createPostgresStore } from '@svc/webhooks/postgres';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createReceivers, QUEUES, readEnv } from './receivers.js';

const env = readEnv();
const { databaseUrl } = env;
const pool = new pg.Pool({ connectionString: databaseUrl, query_timeout: 2_000 });
pool.on('error', (error) => console.error('dedup pool:', error.message));
const dedup = createPostgresStore({ client: pool });
await dedup.migrate();
const { mail, crm } = createReceivers({
  mailSecret: env.mailSecret,
  crmSecret: env.crmSecret,
  dedup,
});

const boss = new PgBoss(databaseUrl);
boss.on('error', (error) => console.error('pg-boss:', error.message));
await boss.start();
// Each worker stops boss on SIGTERM; the second one's stop finds it stopped already.
await createPgBossWorker({
  boss,
  receiver: mail,
  queue: QUEUES.mail,
  onShutdown: () => pool.end().catch(() => {}),
}).start();
await createPgBossWorker({ boss, receiver: crm, queue: QUEUES.crm }).start();
console.error('worker running');
