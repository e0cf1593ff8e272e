/**
 * Worker processes killed with SIGKILL mid-handler under load, and stopped with SIGTERM: 2,000 CRM
 * deliveries over real HTTP, each sent twice (some of the pairs concurrently), to a hand-off receiver
 * on pg-boss; two worker processes run the handlers; one is killed twice while a handler runs and
 * restarted. Every delivery completes once (2,000 completed dedup records, 2,000 distinct handler
 * completions), none is lost, none dead-lettered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createCrmReceiver } from '@svc/webhooks';
import { createPgBossHandoff, listPgBossDeadLetters } from '@svc/webhooks/pg-boss';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, type Delivery } from '../../receivers/support.js';
import { type PostgresServer, postgresAvailable, startPostgres } from '../../support/servers.js';
import {
  post,
  serve,
  spawnWorker,
  startBoss,
  unique,
  until,
  type WorkerEnv,
  type WorkerProcess,
} from './support.js';

const RETRY = { limit: 20, delaySeconds: 1, backoff: false };

describe.runIf(postgresAvailable())('pg-boss hand-off: worker processes crash', () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: postgres.connectionString, max: 4 });
    pool.on('error', () => {});
  });
  afterAll(async () => {
    await pool?.end();
    await postgres?.close();
  });

  async function setup() {
    const schema = unique('pgboss');
    const queue = unique('webhooks');
    const table = unique('dedup');
    const boss = await startBoss(postgres.connectionString, schema);
    const handoff = createPgBossHandoff({ boss, queue, retry: RETRY, expireInSeconds: 3 });
    await handoff.createQueues();
    // The receiving process registers the same handlers as the workers (one set of `.on(...)`); here
    // they never run: the receiver only enqueues.
    const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff, logger: () => {} }).onAny(() => {
      throw new Error('handlers run in the workers only');
    });
    const server = await serve(receiver);
    const env: WorkerEnv = {
      DATABASE_URL: postgres.connectionString,
      SCHEMA: schema,
      QUEUE: queue,
      DEDUP_TABLE: table,
      CRM_SECRET,
      HANDLER_MS: '20',
      CONCURRENCY: '4',
      LEASE_MS: '2500',
      EXPIRE_SECONDS: '3',
    };
    const completed = async () =>
      Number(
        (
          await pool
            .query(`SELECT count(*) AS n FROM "${table}" WHERE completed`)
            .catch(() => ({ rows: [{ n: 0 }] }))
        ).rows[0].n,
      );
    return { boss, queue, server, env, completed };
  }

  it('2,000 deliveries sent twice, a worker SIGKILLed mid-handler twice and restarted: 2,000 unique completions, none lost, none dead-lettered', async () => {
    const { boss, queue, server, env, completed } = await setup();
    const workers: WorkerProcess[] = [];
    const all: WorkerProcess[] = []; // every process started, killed ones too (their output counts)
    try {
      workers.push(await spawnWorker(env), await spawnWorker(env));
      all.push(...workers);
      const deliveries: Delivery[] = Array.from({ length: 2_000 }, () => crmDelivery('deal.won'));
      const statuses: number[] = [];
      const send = async (delivery: Delivery) => statuses.push((await post(server.url, delivery)).status);
      // Both sends of every fourth delivery at once; the others' second send in a later pass.
      const pass = async (items: Delivery[], both: (i: number) => boolean) => {
        for (let i = 0; i < items.length; i += 32) {
          await Promise.all(
            items
              .slice(i, i + 32)
              .flatMap((delivery, j) => (both(i + j) ? [send(delivery), send(delivery)] : [send(delivery)])),
          );
        }
      };
      const kills: string[] = [];
      const killer = (async () => {
        for (const threshold of [500, 1_200]) {
          // Wait until the first worker is mid-handler past the threshold, then kill it.
          const victim = workers[0]!;
          const total = () => all.reduce((n, w) => n + w.done.length, 0);
          await until(() => total() >= threshold && victim.running.size > 0, 120_000);
          kills.push([...victim.running][0] ?? '');
          victim.child.kill('SIGKILL');
          const { signal } = await victim.exited;
          expect(signal).toBe('SIGKILL');
          workers[0] = await spawnWorker(env);
          all.push(workers[0]);
        }
      })();
      await pass(deliveries, (i) => i % 4 === 0);
      await pass(
        deliveries.filter((_, i) => i % 4 !== 0),
        () => false,
      );
      await killer;
      expect(statuses).toHaveLength(2 * 2_000);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(await boss.findJobs(queue, { limit: 10_000 })).toHaveLength(2_000);

      expect(await until(async () => (await completed()) === 2_000, 120_000)).toBe(true);
      const done = all.flatMap((w) => w.done);
      const distinct = new Set(done);
      expect(distinct.size).toBe(2_000);
      expect(deliveries.every((d) => distinct.has(d.deliveryId))).toBe(true);
      // Killed mid-handler: those handlers ran again (side effects at least once), completed once.
      expect(kills.filter(Boolean)).toHaveLength(2);
      expect(await listPgBossDeadLetters({ boss, queue })).toEqual([]);
      await sleep(1_000);
      expect(await completed()).toBe(2_000);
    } finally {
      for (const worker of all) worker.child.kill('SIGKILL');
      await server.close();
      await boss.stop({ graceful: false });
    }
  }, 240_000);

  it('SIGTERM: the worker stops taking jobs, finishes the running one, and exits', async () => {
    const { boss, queue, server, env, completed } = await setup();
    const worker = await spawnWorker({
      ...env,
      HANDLER_MS: '1500',
      CONCURRENCY: '1',
      LEASE_MS: '5000',
      EXPIRE_SECONDS: '5',
    });
    try {
      const deliveries = Array.from({ length: 3 }, () => crmDelivery('deal.won'));
      for (const delivery of deliveries) expect((await post(server.url, delivery)).status).toBe(200);
      expect(await until(() => worker.running.size === 1)).toBe(true);
      const running = [...worker.running][0];
      worker.child.kill('SIGTERM');
      const { code } = await worker.exited;
      expect(code).toBe(0);
      expect(worker.done, worker.stderr()).toEqual([running]); // finished the running job, took no other
      expect(await completed()).toBe(1);
      const waiting = await boss.findJobs(queue, { queued: true });
      expect(waiting).toHaveLength(2);
    } finally {
      worker.child.kill('SIGKILL');
      await server.close();
      await boss.stop({ graceful: false });
    }
  }, 60_000);
  it('SIGTERM past the shutdown deadline: the running handler is aborted and released, and runs again in another worker', async () => {
    const { server, env, completed, boss } = await setup();
    const slow = await spawnWorker({
      ...env,
      HANDLER_MS: '20000',
      CONCURRENCY: '1',
      LEASE_MS: '30000',
      EXPIRE_SECONDS: '60',
      SHUTDOWN_MS: '300',
    });
    let next: WorkerProcess | undefined;
    try {
      const delivery = crmDelivery('deal.won');
      expect((await post(server.url, delivery)).status).toBe(200);
      expect(await until(() => slow.running.size === 1)).toBe(true);
      const stoppedAt = Date.now();
      slow.child.kill('SIGTERM');
      expect((await slow.exited).code).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(10_000); // not the handler's 20 s
      expect(slow.done).toEqual([]);
      // Released, not left to expire (60 s): another worker runs it after pg-boss's 1 s retry delay.
      next = await spawnWorker({ ...env, HANDLER_MS: '10', LEASE_MS: '30000', EXPIRE_SECONDS: '60' });
      expect(await until(() => next!.done.includes(delivery.deliveryId), 15_000)).toBe(true);
      expect(await until(async () => (await completed()) === 1)).toBe(true);
    } finally {
      slow.child.kill('SIGKILL');
      next?.child.kill('SIGKILL');
      await server.close();
      await boss.stop({ graceful: false });
    }
  }, 60_000);
});
