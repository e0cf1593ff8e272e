/**
 * The pg-boss worker against a real PostgreSQL: each job completes on its own (a slow job does not
 * hold the completion of one fetched beside it); dead letters that fail again at once are re-driven
 * exactly once each; a misconfiguration fails when the worker is created or started.
 */
import { type CrmReceiver, createCrmReceiver } from '@svc/webhooks';
import {
  createPgBossHandoff,
  createPgBossWorker,
  listPgBossDeadLetters,
  type PgBossWorker,
  redrivePgBossDeadLetters,
} from '@svc/webhooks/pg-boss';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import { pgBossJobId } from '../../../src/handoff/pg-boss/job-id.js';
import { CRM_SECRET, crmDelivery, deferred } from '../../receivers/support.js';
import { postgresAvailable } from '../../support/servers.js';
import { post, serve, startBoss, unique, until, usePostgres } from './support.js';

const FAST_RETRY = { limit: 2, delaySeconds: 0, backoff: false } as const;

describe.runIf(postgresAvailable())('pg-boss worker', () => {
  const db = usePostgres();
  const { cleanup } = db;

  async function setup() {
    const boss = await startBoss(db.postgres.connectionString, unique('pgboss'));
    cleanup.push(() => boss.stop({ graceful: false }));
    const dedup = createPostgresStore({ client: db.pool, table: unique('dedup') });
    await dedup.migrate();
    const queue = unique('webhooks');
    const handoff = createPgBossHandoff({ boss, queue, retry: FAST_RETRY });
    await handoff.createQueues();
    const receiver: CrmReceiver = createCrmReceiver({ secret: CRM_SECRET, dedup, handoff, logger: () => {} });
    const server = await serve(receiver);
    cleanup.push(() => server.close());
    const results: string[] = [];
    const start = async (
      extra: { concurrency?: number; expireInSeconds?: number } = {},
    ): Promise<PgBossWorker> => {
      const worker = await createPgBossWorker({
        boss,
        receiver,
        queue,
        retry: FAST_RETRY,
        signals: false,
        onJob: ({ result }) => results.push(result),
        ...extra,
      }).start();
      cleanup.push(() => worker.stop());
      return worker;
    };
    const stateOf = async (deliveryId: string) =>
      (await boss.findJobs(queue, { id: pgBossJobId(`crm:delivery:${deliveryId}`) }))[0]?.state;
    return { boss, queue, receiver, server, results, start, stateOf };
  }

  it('completes a fast job while a slow one fetched with it still runs', async () => {
    const { server, receiver, start, stateOf } = await setup();
    const slow = crmDelivery('deal.won');
    const fast = crmDelivery('deal.won');
    const gate = deferred();
    let slowRunning = false;
    receiver.on('deal.won', async (event) => {
      if (event.deliveryId !== slow.deliveryId) return;
      slowRunning = true;
      await gate.promise;
    });
    // Both queued before the worker starts: one fetch of two jobs before, two slots of one now.
    for (const delivery of [slow, fast]) expect((await post(server.url, delivery)).status).toBe(200);
    await start({ concurrency: 2 });
    try {
      expect(await until(() => slowRunning)).toBe(true);
      expect(await until(async () => (await stateOf(fast.deliveryId)) === 'completed', 5_000)).toBe(true);
      expect(await stateOf(slow.deliveryId)).toBe('active');
    } finally {
      gate.resolve();
    }
    expect(await until(async () => (await stateOf(slow.deliveryId)) === 'completed')).toBe(true);
  });

  it('re-drives dead letters that fail again at once exactly once each, and returns', async () => {
    const { boss, queue, results, start } = await setup();
    for (const id of ['a', 'b', 'c']) await boss.send(queue, { not: 'a job', id });
    await start();
    expect(await until(async () => (await listPgBossDeadLetters({ boss, queue })).length === 3)).toBe(true);
    expect(results).toEqual(['dead-lettered', 'dead-lettered', 'dead-lettered']);
    expect(await redrivePgBossDeadLetters({ boss, queue })).toBe(3);
    expect(await until(() => results.length === 6)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(results).toHaveLength(6); // each letter ran once more, no more
    const letters = await listPgBossDeadLetters({ boss, queue });
    expect(letters.map((letter) => (letter.data as { id: string }).id).sort()).toEqual(['a', 'b', 'c']);
  });

  it('refuses options it cannot run with when created, and an expiry shorter than the handler budget when started', async () => {
    const { boss, queue, receiver, server, start, stateOf } = await setup();
    const bad: [string, object][] = [
      ['concurrency', { concurrency: 0 }],
      ['pollingIntervalSeconds', { pollingIntervalSeconds: 0.1 }],
      ['shutdownTimeoutMs', { shutdownTimeoutMs: -5 }],
      ['signals', { signals: 'SIGTERM' }],
      ['onJob', { onJob: 'log' }],
      ['queue', { queue: 'no spaces allowed' }],
    ];
    for (const [name, override] of bad) {
      expect(() => createPgBossWorker({ boss, receiver, queue, signals: false, ...override })).toThrow(
        expect.objectContaining({ code: 'options_invalid', message: expect.stringContaining(name) }),
      );
    }
    expect(() => createPgBossWorker({ boss, receiver: {} as CrmReceiver, queue })).toThrow(
      expect.objectContaining({ code: 'options_invalid' }),
    );
    let handled = 0;
    receiver.on('deal.won', () => {
      handled++;
    });
    const delivery = crmDelivery('deal.won');
    expect((await post(server.url, delivery)).status).toBe(200);
    // The receiver's lease is 30 s, so its handlers may run 29 s: pg-boss must not expire them at 20 s.
    await expect(start({ expireInSeconds: 20 })).rejects.toMatchObject({
      code: 'options_invalid',
      message: expect.stringContaining('expireInSeconds (20)'),
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([handled, await stateOf(delivery.deliveryId)]).toEqual([0, 'created']);
    await start({ expireInSeconds: 30 });
    expect(await until(() => handled === 1)).toBe(true);
  });
});
