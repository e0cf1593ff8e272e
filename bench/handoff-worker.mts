/**
 * A worker process of bench/handoff.mts: a CRM receiver with a no-op handler on the given engine
 * (ENGINE=pg-boss|bullmq). Prints `ready` when connected, starts taking jobs on SIGUSR2 (so every
 * worker of a round starts at once, after its start-up), and prints `count <n>` every 100 ms.
 */

import { Redis } from 'ioredis';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { createPostgresStore } from '../src/dedup/postgres.js';
import { createRedisStore } from '../src/dedup/redis.js';
import { createBullmqWorker } from '../src/handoff/bullmq/index.js';
import { createPgBossWorker } from '../src/handoff/pg-boss/index.js';
import { createCrmReceiver } from '../src/index.js';

const env = process.env;
let count = 0;
// Round trips this process sends to the engine and the dedup store (pg-boss: SQL statements).
let statements = 0;
const concurrency = Number(env.CONCURRENCY ?? 8);
let start: () => Promise<unknown>;
if (env.ENGINE === 'pg-boss') {
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: concurrency + 4 });
  pool.on('error', () => {});
  const counted = {
    query: (text: string, values?: unknown[]) => {
      statements++;
      return pool.query(text, values as unknown[]);
    },
  };
  const dedup = createPostgresStore({ client: counted, table: env.DEDUP_TABLE! });
  const receiver = createCrmReceiver({ secret: env.CRM_SECRET!, dedup }).onAny(() => {
    count++;
  });
  const boss = new PgBoss({
    schema: env.SCHEMA,
    supervise: false,
    schedule: false,
    db: { executeSql: (text: string, values?: unknown[]) => counted.query(text, values) },
  });
  boss.on('error', (error) => console.error('pg-boss', error.message));
  await boss.start();
  start = () => createPgBossWorker({ boss, receiver, queue: env.QUEUE, concurrency }).start();
} else {
  const redis = new Redis(Number(env.REDIS_PORT), '127.0.0.1', { maxRetriesPerRequest: null });
  const dedup = createRedisStore({ client: redis, prefix: `${env.QUEUE}:dedup:` });
  const receiver = createCrmReceiver({ secret: env.CRM_SECRET!, dedup }).onAny(() => {
    count++;
  });
  start = async () => {
    const { worker } = createBullmqWorker(receiver, {
      queueName: env.QUEUE!,
      connection: redis,
      concurrency,
    });
    await worker.waitUntilReady();
  };
}
process.once('SIGUSR2', () => void start());
setInterval(() => {
  const cpu = process.cpuUsage();
  process.stdout.write(`count ${count} ${statements} ${Math.round((cpu.user + cpu.system) / 1000)}\n`);
}, 100);
process.stdout.write('ready\n');
