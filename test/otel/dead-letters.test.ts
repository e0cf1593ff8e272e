/**
 * Dead letters counted by the real engines: a BullMQ worker (real redis-server) and a pg-boss worker
 * (real PostgreSQL) each dead-letter a job whose handler fails on every attempt and a job that is not
 * a job of this receiver; the receiver's telemetry counts both in `svc_webhooks.dead_letters` with
 * their code, and each run in `svc_webhooks.deliveries` and `messaging.process.duration`.
 */
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createBullmqHandoff, createBullmqWorker } from '@svc/webhooks/bullmq';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { createPgBossHandoff, createPgBossWorker } from '@svc/webhooks/pg-boss';
import { createPostgresStore } from '@svc/webhooks/postgres';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, serve, startBoss, unique, until, usePostgres } from '../handoff/pg-boss/support.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { postgresAvailable, type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

function metered() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const points = async (name: string): Promise<DataPoint<number | Histogram>[]> => {
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
  };
  // No tracer provider given and none registered: metrics only.
  return { telemetry: createOtelTelemetry({ meterProvider }), points };
}

const byCode = (points: DataPoint<number | Histogram>[]) =>
  Object.fromEntries(points.map((point) => [String(point.attributes['error.type']), point.value]));

describe.runIf(redisAvailable())('BullMQ worker', () => {
  let redis: RedisServer;
  let connection: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    connection?.disconnect();
    await redis?.close();
  });

  it('counts a job whose attempts ran out and a job that is not one, with their codes', async () => {
    const queueName = `otel-dead-${process.pid}`;
    const queue = new Queue(queueName, { connection });
    const { telemetry, points } = metered();
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      logger: false,
      telemetry,
      timeoutMs: 2_000,
      leaseMs: 3_000,
      handoff: createBullmqHandoff({ queue, attempts: 2, backoffMs: 10 }),
    }).on('bounced', () => {
      throw new Error('crm database down');
    });
    const { close } = createBullmqWorker(receiver, { queueName, connection, shutdownSignals: [] });
    try {
      expect((await deliver(receiver, mailDelivery('bounced'))).kind).toBe('queued');
      await queue.add('junk', { not: 'a job' }, { attempts: 2 });
      expect(await until(async () => (await queue.getFailedCount()) === 2)).toBe(true);
      expect(await until(async () => (await points('svc_webhooks.dead_letters')).length === 2)).toBe(true);
      expect(byCode(await points('svc_webhooks.dead_letters'))).toEqual({
        handler_failed: 1,
        job_invalid: 1,
      });
      const runs = (await points('svc_webhooks.deliveries')).filter(
        (point) => point.attributes['messaging.operation.name'] === 'process',
      );
      expect(byCode(runs)).toEqual({ handler_failed: 2, job_invalid: 1 });
      const durations = await points('messaging.process.duration');
      expect(durations.reduce((sum, point) => sum + (point.value as Histogram).count, 0)).toBe(3);
    } finally {
      await close();
      await queue.close();
    }
  });
});

describe.runIf(postgresAvailable())('pg-boss worker', () => {
  const db = usePostgres();

  it('counts a job whose retries ran out and a job that is not one, with their codes', async () => {
    const boss = await startBoss(db.postgres.connectionString, unique('pgboss'));
    db.cleanup.push(() => boss.stop({ graceful: false }));
    const dedup = createPostgresStore({ client: db.pool, table: unique('dedup') });
    await dedup.migrate();
    const queue = unique('webhooks');
    const retry = { limit: 1, delaySeconds: 0, backoff: false } as const;
    const handoff = createPgBossHandoff({ boss, queue, retry });
    await handoff.createQueues();
    const { telemetry, points } = metered();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup, handoff, telemetry, logger: false }).on(
      'deal.won',
      () => {
        throw new Error('crm database down');
      },
    );
    const server = await serve(receiver);
    db.cleanup.push(() => server.close());
    expect((await post(server.url, crmDelivery('deal.won'))).status).toBe(200);
    await boss.send(queue, { not: 'a job' });
    const worker = await createPgBossWorker({ boss, receiver, queue, retry, signals: false }).start();
    db.cleanup.push(() => worker.stop());
    expect(await until(async () => (await points('svc_webhooks.dead_letters')).length === 2)).toBe(true);
    expect(byCode(await points('svc_webhooks.dead_letters'))).toEqual({ handler_failed: 1, job_invalid: 1 });
  });
});
