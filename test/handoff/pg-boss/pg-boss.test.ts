import type { HandoffJob } from '../../../src/handoff/job/types.js';
/**
 * The pg-boss hand-off against a real PostgreSQL: idempotent enqueue, duplicates while queued or
 * running, retries then dead letters with list and re-drive, bad job data, Postgres down at enqueue,
 * and a handler outage under the reference emitters. Workers run in this process here; the crash
 * tests (SIGKILL) run worker processes (crash.test.ts).
 */

import { createCrmReceiver, createMailReceiver, type ErrorInfo } from '@svc/webhooks';
import {
  createPgBossHandoff,
  createPgBossWorker,
  listPgBossDeadLetters,
  type PgBossWorker,
  redrivePgBossDeadLetters,
} from '@svc/webhooks/pg-boss';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { createCrmEmitter, createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pgBossJobId } from '../../../src/handoff/pg-boss/job-id.js';
import { CRM_SECRET, crmDelivery, deferred } from '../../receivers/support.js';
import { type PostgresServer, postgresAvailable, startPostgres } from '../../support/servers.js';
import { resigned } from '../job-mac.js';
import { DURABLE, post, serve, startBoss, unique, until } from './support.js';

const FAST_RETRY = { limit: 2, delaySeconds: 0, backoff: false } as const;

describe.runIf(postgresAvailable())('pg-boss hand-off', () => {
  let postgres: PostgresServer;
  let pool: pg.Pool;
  const cleanup: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    postgres = await startPostgres();
    pool = new pg.Pool({ connectionString: postgres.connectionString, max: 10 });
    pool.on('error', () => {});
  });
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => {});
  });
  afterAll(async () => {
    await pool?.end();
    await postgres?.close();
  });

  /** A CRM receiver in hand-off mode on its own schema, queue and dedup table, served over HTTP. */
  async function setup(
    options: {
      retry?: typeof FAST_RETRY | { limit: number; delaySeconds: number; backoff: boolean };
      lease?: { leaseMs: number; timeoutMs: number };
    } = {},
  ) {
    const boss = await startBoss(postgres.connectionString, unique('pgboss'));
    cleanup.push(() => boss.stop({ graceful: false }));
    const dedup = createPostgresStore({ client: pool, table: unique('dedup') });
    await dedup.migrate();
    const queue = unique('webhooks');
    const retry = options.retry ?? FAST_RETRY;
    const handoff = createPgBossHandoff({ boss, queue, retry });
    await handoff.createQueues();
    const errors: { error: unknown; info: ErrorInfo<unknown> }[] = [];
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      dedup,
      handoff,
      logger: () => {},
      ...options.lease,
    }).onError((error, info) => {
      errors.push({ error, info: info as ErrorInfo<unknown> });
    });
    const server = await serve(receiver);
    cleanup.push(() => server.close());
    const startWorker = async (extra: { concurrency?: number } = {}): Promise<PgBossWorker> => {
      const worker = await createPgBossWorker({
        boss,
        receiver,
        queue,
        retry,
        signals: false,
        ...extra,
      }).start();
      cleanup.push(() => worker.stop());
      return worker;
    };
    const jobsOf = (key: string) => boss.findJobs(queue, { id: pgBossJobId(key) });
    return { boss, queue, handoff, receiver, server, errors, startWorker, jobsOf, dedup };
  }

  it('acknowledges a delivery once its job is stored, and a repeat (also concurrent) without a second job', async () => {
    const { server, boss, queue, jobsOf, receiver } = await setup();
    receiver.on('deal.won', () => {}); // a delivery with no handler is acknowledged without a job
    const delivery = crmDelivery('deal.won');
    const first = await post(server.url, delivery);
    expect(first.status).toBe(200);
    const repeats = await Promise.all(Array.from({ length: 5 }, () => post(server.url, delivery)));
    expect(repeats.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await jobsOf(`crm:delivery:${delivery.deliveryId}`)).toHaveLength(1);
    expect(await boss.findJobs(queue)).toHaveLength(1);
    // Concurrent first attempts of another delivery: one job.
    const other = crmDelivery('deal.won');
    const racing = await Promise.all(Array.from({ length: 8 }, () => post(server.url, other)));
    expect(racing.every((r) => r.status === 200)).toBe(true);
    expect(await boss.findJobs(queue)).toHaveLength(2);
  });

  it('acknowledges the retry of a delivery whose enqueue succeeded but whose 2xx never arrived', async () => {
    const { server, handoff, boss, queue, receiver } = await setup();
    receiver.on('deal.won', () => {});
    const delivery = crmDelivery('deal.won');
    // The first attempt's write committed; its answer was lost (the job exists, the sender retries).
    const body = Buffer.from(delivery.body).toString('base64');
    const job: HandoffJob = resigned(
      {
        v: 2,
        service: 'crm',
        deliveryId: delivery.deliveryId,
        event: 'deal.won',
        dedupKey: `crm:delivery:${delivery.deliveryId}`,
        receivedAt: Date.now(),
        secretIndex: 0,
        headers: { 'x-svc-event': 'deal.won', 'x-svc-delivery': delivery.deliveryId },
        body,
        mac: '',
      },
      CRM_SECRET,
    );
    expect(await handoff.enqueue(job, { signal: new AbortController().signal })).toBe('enqueued');
    const retry = await post(server.url, delivery);
    expect(retry.status).toBe(200);
    expect(retry.body).toContain('duplicate');
    expect(await boss.findJobs(queue)).toHaveLength(1);
  });

  it('a duplicate while the job is queued, then while it runs: 2xx, still one job, one handler run', async () => {
    const { server, receiver, startWorker, jobsOf } = await setup();
    const gate = deferred();
    const runs: string[] = [];
    let running = false;
    receiver.on('deal.won', async (event) => {
      running = true;
      runs.push(event.deliveryId);
      await gate.promise;
    });
    const delivery = crmDelivery('deal.won');
    const key = `crm:delivery:${delivery.deliveryId}`;
    expect((await post(server.url, delivery)).status).toBe(200);
    expect((await post(server.url, delivery)).status).toBe(200); // queued
    expect((await jobsOf(key))[0]?.state).toBe('created');
    await startWorker();
    expect(await until(() => running)).toBe(true);
    expect((await post(server.url, delivery)).status).toBe(200); // running
    expect((await jobsOf(key)).map((j) => j.state)).toEqual(['active']);
    gate.resolve();
    expect(await until(async () => (await jobsOf(key))[0]?.state === 'completed')).toBe(true);
    expect((await post(server.url, delivery)).status).toBe(200); // completed
    expect(await jobsOf(key)).toHaveLength(1);
    expect(runs).toEqual([delivery.deliveryId]);
  });

  it('a handler that always throws: retried per the policy, dead-lettered, listed, re-driven after a fix, processed once', async () => {
    const { server, receiver, startWorker, boss, queue, errors } = await setup();
    const attempts: (number | undefined)[] = [];
    let fixed = false;
    let effects = 0;
    receiver.on('deal.won', (_event, context) => {
      attempts.push(context.attempt);
      if (!fixed) throw new Error('CRM database is down');
      effects++;
    });
    const delivery = crmDelivery('deal.won');
    expect((await post(server.url, delivery)).status).toBe(200);
    await startWorker();
    expect(await until(async () => (await listPgBossDeadLetters({ boss, queue })).length === 1)).toBe(true);
    expect(attempts).toEqual([1, 2, 3]); // the first attempt and FAST_RETRY.limit = 2 retries
    const [dead] = await listPgBossDeadLetters({ boss, queue });
    expect(dead).toMatchObject({
      deliveryId: delivery.deliveryId,
      event: 'deal.won',
      dedupKey: `crm:delivery:${delivery.deliveryId}`,
      code: 'handler_failed',
      attempts: 3,
    });
    expect(dead?.reason).toContain('CRM database is down');
    // Every failed run reached onError; the last one is reported as dead-lettered too.
    expect(errors.filter((e) => e.info.phase === 'handler')).toHaveLength(3);
    expect(errors.filter((e) => e.info.phase === 'job')).toHaveLength(1);
    fixed = true;
    expect(await redrivePgBossDeadLetters({ boss, queue })).toBe(1);
    expect(await until(() => effects === 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(effects).toBe(1);
    expect(await listPgBossDeadLetters({ boss, queue })).toEqual([]);
    // A repeat of the delivery now: acknowledged, nothing runs again.
    expect((await post(server.url, delivery)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(effects).toBe(1);
  });

  it('bad job data (by hand, another version, the other service): dead-lettered with a clear reason, no crash', async () => {
    const { server, receiver, startWorker, boss, queue, errors } = await setup();
    let effects = 0;
    receiver.on('deal.won', () => {
      effects++;
    });
    const valid = crmDelivery('deal.won');
    await boss.send(queue, { hello: 'world' });
    await boss.send(queue, { v: 0, service: 'crm' });
    await boss.send(queue, { v: 2, service: 'mail', deliveryId: 'd', event: 'bounced', dedupKey: 'k' });
    await boss.send(queue, {
      v: 2,
      service: 'crm',
      deliveryId: valid.deliveryId,
      event: 'deal.won',
      dedupKey: 'crm:delivery:x',
      receivedAt: Date.now(),
      secretIndex: 0,
      headers: {},
      body: 'not base64 at all!',
      mac: 'ab'.repeat(32),
    });
    await startWorker();
    expect(await until(async () => (await listPgBossDeadLetters({ boss, queue })).length === 4)).toBe(true);
    const dead = await listPgBossDeadLetters({ boss, queue });
    expect(dead.map((d) => d.code)).toEqual(['job_invalid', 'job_invalid', 'job_invalid', 'job_invalid']);
    expect(dead.map((d) => d.attempts)).toEqual([1, 1, 1, 1]); // never retried
    const reasonOf = (match: (data: Record<string, unknown>) => boolean) =>
      dead.find((d) => match(d.data as Record<string, unknown>))?.reason;
    expect(reasonOf((d) => d.hello === 'world')).toBe(
      'job_invalid: Invalid hand-off job: format version undefined is not 2.',
    );
    expect(reasonOf((d) => d.v === 0)).toContain('format version 0 is not 2');
    expect(reasonOf((d) => d.service === 'mail')).toContain("job of another service, not 'crm'");
    expect(reasonOf((d) => d.body !== undefined)).toContain('body');
    expect(errors.filter((e) => e.info.phase === 'job')).toHaveLength(4);
    // The worker is still up and handles a real delivery.
    expect((await post(server.url, valid)).status).toBe(200);
    expect(await until(() => effects === 1)).toBe(true);
  });

  it('dead-letters jobs sent straight to the queue (a forged deal.won, a changed key) as job_invalid; no handler runs', async () => {
    const { server, receiver, startWorker, boss, queue, jobsOf } = await setup();
    const values: number[] = [];
    receiver.on('deal.won', (event) => {
      values.push(event.data.value as number);
    });
    const genuine = crmDelivery('deal.won');
    expect((await post(server.url, genuine)).status).toBe(200);
    const [stored] = await jobsOf(`crm:delivery:${genuine.deliveryId}`);
    const written = stored!.data as HandoffJob;
    // `boss.send` with a hand-made payload, exactly as a worker set up per docs/handoff.md reads it.
    const fake = crmDelivery('deal.won', { data: { deal_id: 'd_9', title: 'Forged', value: 9_999_999 } });
    const forged: HandoffJob = {
      v: 2,
      service: 'crm',
      deliveryId: fake.deliveryId,
      event: 'deal.won',
      dedupKey: `crm:delivery:${fake.deliveryId}`,
      receivedAt: Date.now(),
      secretIndex: 0,
      headers: { 'x-svc-event': 'deal.won', 'x-svc-delivery': fake.deliveryId },
      body: Buffer.from(fake.body).toString('base64'),
      mac: 'f'.repeat(64),
    };
    await boss.send(queue, forged);
    await boss.send(queue, resigned(forged, 'whsec_attacker_guess_0001'));
    // The genuine job once more under another key: its claim would be new.
    await boss.send(queue, { ...written, dedupKey: 'crm:delivery:again' });
    await startWorker();
    expect(await until(async () => (await listPgBossDeadLetters({ boss, queue })).length === 3)).toBe(true);
    expect(await until(() => values.length === 1)).toBe(true);
    const dead = await listPgBossDeadLetters({ boss, queue });
    expect(dead.map((d) => [d.code, d.attempts, d.reason])).toEqual(
      dead.map(() => [
        'job_invalid',
        1,
        "job_invalid: Invalid hand-off job: its mac matches none of this worker's secrets.",
      ]),
    );
    expect(values).toEqual([1500.5]);
  });

  it('dead-letters a job whose event has no handler here as no_handler, and runs it once re-driven after one is registered', async () => {
    const { server, receiver, startWorker, boss, queue } = await setup();
    receiver.on('deal.won', () => {});
    const delivery = crmDelivery('deal.lost');
    expect((await post(server.url, delivery)).status).toBe(200);
    await startWorker();
    expect(await until(async () => (await listPgBossDeadLetters({ boss, queue })).length === 1)).toBe(true);
    const [dead] = await listPgBossDeadLetters({ boss, queue });
    expect(dead).toMatchObject({ deliveryId: delivery.deliveryId, code: 'no_handler', attempts: 1 });
    let ran = 0;
    receiver.on('deal.lost', () => {
      ran++;
    });
    expect(await redrivePgBossDeadLetters({ boss, queue })).toBe(1);
    expect(await until(() => ran === 1)).toBe(true);
  });

  it('never runs one delivery twice at once: a handler ignoring its signal past the lease keeps its claim', async () => {
    const { server, receiver, startWorker, jobsOf } = await setup({
      retry: { limit: 20, delaySeconds: 1, backoff: false },
      lease: { leaseMs: 1_500, timeoutMs: 1_000 },
    });
    let running = 0;
    let most = 0;
    let runs = 0;
    receiver.on('deal.won', async () => {
      runs++;
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 4_000)); // > 2 leases, signal ignored
      running--;
    });
    const delivery = crmDelivery('deal.won');
    expect((await post(server.url, delivery)).status).toBe(200);
    await startWorker();
    const key = `crm:delivery:${delivery.deliveryId}`;
    await until(async () => most > 1 || (await jobsOf(key))[0]?.state === 'completed', 30_000);
    expect([runs, most]).toEqual([1, 1]);
    expect((await jobsOf(key))[0]?.state).toBe('completed');
  }, 40_000);
});

describe.runIf(postgresAvailable())('pg-boss hand-off: Postgres down at enqueue', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    await postgres?.close();
  });

  it('answers 503 with Retry-After while Postgres is down, no 2xx for anything not stored; the retries are accepted and processed once', async () => {
    let boss: (PgBoss & { errors: Error[] }) | undefined;
    let close: (() => Promise<void>) | undefined;
    const pool = new pg.Pool({ connectionString: postgres.connectionString, max: 5, options: DURABLE });
    pool.on('error', () => {});
    try {
      boss = await startBoss(postgres.connectionString, unique('pgboss'));
      const dedup = createPostgresStore({ client: pool, table: unique('dedup') });
      await dedup.migrate();
      const queue = unique('webhooks');
      const handoff = createPgBossHandoff({ boss, queue, retry: FAST_RETRY, enqueueTimeoutMs: 1_000 });
      await handoff.createQueues();
      const effects = new Map<string, number>();
      const receiver = createCrmReceiver({
        secret: CRM_SECRET,
        dedup,
        handoff,
        logger: (e) => {
          if (process.env.DEBUG_PGB) console.log(JSON.stringify(e));
        },
      }).on('deal.won', (event) => {
        effects.set(event.deliveryId, (effects.get(event.deliveryId) ?? 0) + 1);
      });
      const server = await serve(receiver);
      close = server.close;
      const before = crmDelivery('deal.won');
      expect((await post(server.url, before)).status).toBe(200);

      await postgres.stop();
      const during = Array.from({ length: 10 }, () => crmDelivery('deal.won'));
      const statuses = await Promise.all(
        during.map(async (delivery) => {
          const response = await fetch(server.url, {
            method: 'POST',
            body: delivery.body,
            headers: delivery.headers,
          });
          await response.arrayBuffer();
          return { status: response.status, retryAfter: response.headers.get('retry-after') };
        }),
      );
      expect(statuses.map((s) => s.status)).toEqual(during.map(() => 503));
      expect(statuses.every((s) => s.retryAfter !== null)).toBe(true);
      await postgres.start();
      // Nothing answered 503 was stored.
      for (const delivery of during) {
        expect(
          await boss.findJobs(queue, { id: pgBossJobId(`crm:delivery:${delivery.deliveryId}`) }),
        ).toEqual([]);
      }
      // The sender's retries (pg-boss's pool reconnects by itself).
      for (const delivery of during) {
        let last = { status: 0, body: '' };
        const accepted = await until(async () => {
          last = await post(server.url, delivery);
          return last.status === 200;
        }, 15_000);
        expect(accepted, `${last.status} ${last.body} ${boss.errors.map((e) => e.message).join('; ')}`).toBe(
          true,
        );
      }
      const worker = await createPgBossWorker({
        boss,
        receiver,
        queue,
        retry: FAST_RETRY,
        signals: false,
      }).start();
      try {
        const all = [before, ...during].map((d) => d.deliveryId);
        expect(await until(() => all.every((id) => effects.get(id) === 1))).toBe(true);
        expect([...effects.values()].every((n) => n === 1)).toBe(true);
      } finally {
        await worker.stop();
      }
    } finally {
      await close?.();
      await boss?.stop({ graceful: false }).catch(() => {});
      await pool.end();
    }
  }, 60_000);
});

describe.runIf(postgresAvailable())(
  'pg-boss hand-off under the reference emitters: a 60 s handler outage',
  () => {
    let postgres: PostgresServer;
    let pool: pg.Pool;
    beforeAll(async () => {
      postgres = await startPostgres();
      pool = new pg.Pool({ connectionString: postgres.connectionString, max: 10 });
      pool.on('error', () => {});
    });
    afterAll(async () => {
      await pool?.end();
      await postgres?.close();
    });

    for (const outage of ['every handler fails', 'the workers are stopped'] as const) {
      it(`every delivery succeeds at attempt 1, the email webhook never pauses, every event is handled once: ${outage}`, async () => {
        const clock = createVirtualClock({ start: Date.parse('2025-06-02T09:00:00.000Z') });
        const mail = createMailEmitter({ clock, seed: `outage-mail-${outage}`, allowPrivateNetworks: true });
        const crm = createCrmEmitter({ clock, seed: `outage-crm-${outage}`, allowPrivateNetworks: true });
        const mailHook = mail.createWebhook({
          url: 'http://127.0.0.1:1/',
          events: ['delivered', 'opened'],
          description: 't',
        });
        const crmHook = crm.createWebhook({ name: 't', url: 'http://127.0.0.1:1/', events: ['deal.won'] });
        const boss = await startBoss(postgres.connectionString, unique('pgboss'));
        const stops: (() => Promise<unknown>)[] = [() => boss.stop({ graceful: false })];
        try {
          const failing = { on: outage === 'every handler fails' };
          const effects = new Map<string, number>();
          let failedRuns = 0;
          const effect = (id: string) => {
            if (failing.on) {
              failedRuns++;
              throw new Error('database unavailable');
            }
            effects.set(id, (effects.get(id) ?? 0) + 1);
          };
          const retry = { limit: 100, delaySeconds: 1, backoff: false };
          const mailQueue = unique('mail');
          const crmQueue = unique('crm');
          const mailHandoff = createPgBossHandoff({ boss, queue: mailQueue, retry });
          const crmHandoff = createPgBossHandoff({ boss, queue: crmQueue, retry });
          await mailHandoff.createQueues();
          await crmHandoff.createQueues();
          const mailDedup = createPostgresStore({ client: pool, table: unique('dedup') });
          const crmDedup = createPostgresStore({ client: pool, table: unique('dedup') });
          await mailDedup.migrate();
          await crmDedup.migrate();
          const mailReceiver = createMailReceiver({
            secret: mailHook.secret,
            dedup: mailDedup,
            handoff: mailHandoff,
            logger: () => {},
          }).onAny((event) => effect(event.deliveryId));
          const crmReceiver = createCrmReceiver({
            secret: crmHook.secret,
            dedup: crmDedup,
            handoff: crmHandoff,
            logger: () => {},
          }).onAny((event) => effect(event.deliveryId));
          const mailServer = await serve(mailReceiver);
          const crmServer = await serve(crmReceiver);
          stops.push(mailServer.close, crmServer.close);
          mail.updateWebhook(mailHook.id, { url: mailServer.url });
          crm.updateWebhook(crmHook.id, { url: crmServer.url });
          const startWorkers = async () => {
            for (const [receiver, queue] of [
              [mailReceiver, mailQueue],
              [crmReceiver, crmQueue],
            ] as const) {
              const worker = await createPgBossWorker({
                boss,
                receiver,
                queue,
                retry,
                signals: false,
              }).start();
              stops.push(() => worker.stop());
            }
          };
          if (outage === 'every handler fails') await startWorkers();

          // 60 simulated seconds of traffic: 13 deliveries per service, more than the 10 that pause
          // the email webhook when each fails all its attempts (email-service §6 rule 6).
          const ids: { service: 'mail' | 'crm'; id: string }[] = [];
          for (let second = 0; second <= 60; second += 5) {
            const [m] = await mail.emit(second % 10 === 0 ? 'delivered' : 'opened', {
              message_id: `msg_${second}`,
            });
            const [c] = await crm.emit('deal.won');
            ids.push({ service: 'mail', id: m!.id }, { service: 'crm', id: c!.id });
            await clock.advance(5_000);
          }
          await clock.runAll();
          for (const { service, id } of ids) {
            const record = (service === 'mail' ? mail : crm).getDelivery(id);
            expect(record.status, `${service} ${id}`).toBe('succeeded');
            expect(record.attempts.map((a) => a.attempt)).toEqual([1]);
          }
          expect(mail.getWebhook(mailHook.id).status).toBe('active');
          expect(effects.size).toBe(0);

          if (outage === 'every handler fails') {
            expect(await until(() => failedRuns >= ids.length)).toBe(true); // the workers did try
            failing.on = false;
          } else {
            await startWorkers();
          }
          expect(await until(() => ids.every(({ id }) => effects.get(id) === 1), 30_000)).toBe(true);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          expect(ids.map(({ id }) => effects.get(id))).toEqual(ids.map(() => 1));
          expect(effects.size).toBe(ids.length);
        } finally {
          for (const stop of stops.reverse()) await stop().catch(() => {});
        }
      }, 90_000);
    }
  },
);
