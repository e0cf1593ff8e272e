/**
 * Lag as numbers (docs/observability.md "Lag"), on virtual clocks, read back from the real
 * OpenTelemetry SDK's in-memory metric exporter: the email emitter's retries give an event its age
 * at receipt, a row that waited while no inbox worker ran, an SQS job (fauxqs) that waited for its
 * worker and a BullMQ job (a real redis-server) retried after a failed run give their queue wait, and
 * a signed timestamp ahead of the receiver's clock is counted as 0 and flagged. Every expected value is a span of the virtual clock, so they are exact.
 */
import { randomUUID } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { createCrmReceiver, createMailReceiver, type Outcome } from '@svc/webhooks';
import { createBullmqHandoff, createBullmqWorker } from '@svc/webhooks/bullmq';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { createInboxWorker } from '@svc/webhooks/sqlite';
import { createSqsHandoff, createSqsWorker } from '@svc/webhooks/sqs';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { Queue } from 'bullmq';
import type { FauxqsServer } from 'fauxqs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQueues, sqsClient, startSqs } from '../handoff/sqs/support.js';
import { sqliteDatabase, uniqueTable } from '../inbox/support.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { createManualClock } from '../support/clock.js';
import { redisAvailable, startRedis } from '../support/servers.js';

const MINUTE = 60_000;
// The boundaries the entry asks for (explicitBucketBoundaries advice), written out independently.
const BOUNDARIES = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400, 259200,
];

/** A meter provider whose reader exports to the SDK's in-memory exporter on `flush`. */
function metered() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // No export on a timer during a test: only forceFlush() exports.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 2 ** 31 - 1 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  /** The data points of the histogram `name` in the latest export. */
  const histogram = async (name: string): Promise<DataPoint<Histogram>[]> => {
    await reader.forceFlush();
    const latest = exporter.getMetrics().at(-1);
    const metric = latest?.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []) as DataPoint<Histogram>[];
  };
  return { meterProvider, histogram, stop: () => meterProvider.shutdown() };
}

/** A point's count, sum and attributes, and the boundaries it was recorded with. */
const summary = (point: DataPoint<Histogram>) => ({
  attributes: point.attributes,
  count: point.value.count,
  sum: point.value.sum,
  boundaries: point.value.buckets.boundaries,
});

const lagOf = ({ mode, kind, eventAgeMs, clockAhead, queueWaitMs, endToEndMs }: Outcome) => ({
  mode,
  kind,
  eventAgeMs,
  clockAhead,
  queueWaitMs,
  endToEndMs,
});

describe('lag in onOutcome and the OpenTelemetry histograms', () => {
  it('an event the email emitter retried at +1 and +2 minutes: its age at each receipt, end to end once handled', async () => {
    const clock = createVirtualClock({ start: Date.parse('2025-06-02T09:00:00.000Z') });
    const { meterProvider, histogram, stop } = metered();
    const outcomes: Outcome[] = [];
    const emitter = createMailEmitter({ clock, seed: 'lag', handler: (request) => receiver.handle(request) });
    const hook = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['opened'] });
    let failures = 2;
    const receiver = createMailReceiver({
      secret: hook.secret,
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
      onOutcome: (outcome) => outcomes.push(outcome),
    }).on('opened', () => {
      if (failures-- > 0) throw new Error('database down');
    });
    const [delivery] = await emitter.emit('opened');
    await clock.runAll();
    expect(emitter.getDelivery(delivery!.id).attempts.map((a) => a.success)).toEqual([false, false, true]);
    const direct = { mode: 'direct', clockAhead: false, queueWaitMs: undefined };
    expect(outcomes.map(lagOf)).toEqual([
      { ...direct, kind: 'failed', eventAgeMs: 0, endToEndMs: undefined },
      { ...direct, kind: 'failed', eventAgeMs: MINUTE, endToEndMs: undefined },
      { ...direct, kind: 'handled', eventAgeMs: 2 * MINUTE, endToEndMs: 2 * MINUTE },
    ]);
    const labels = { 'messaging.system': 'mail', 'messaging.destination.name': 'opened' };
    expect((await histogram('svc_webhooks.event.age')).map(summary)).toEqual([
      { attributes: labels, count: 3, sum: 180, boundaries: BOUNDARIES },
    ]);
    expect((await histogram('svc_webhooks.end_to_end.duration')).map(summary)).toEqual([
      { attributes: labels, count: 1, sum: 120, boundaries: BOUNDARIES },
    ]);
    // The handlers ran three times, each in no time of the virtual clock; no queue in direct mode.
    expect((await histogram('svc_webhooks.handler.duration')).map(summary)).toEqual([
      { attributes: labels, count: 3, sum: 0, boundaries: BOUNDARIES },
    ]);
    expect(await histogram('svc_webhooks.queue.wait')).toEqual([]);
    await stop();
  });

  it('a signed timestamp ahead of the receiver’s clock: age 0, flagged in the outcome and the point', async () => {
    // The fixture signs 2024-05-01T10:00:00.123Z; this host's clock is 90 s behind it.
    const clock = createVirtualClock({ start: Date.parse('2024-05-01T09:58:30.123Z') });
    const { meterProvider, histogram, stop } = metered();
    const outcomes: Outcome[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
      onOutcome: (outcome) => outcomes.push(outcome),
    }).on('opened', () => {});
    expect((await deliver(receiver, mailDelivery('opened'))).status).toBe(200);
    expect(outcomes.map(lagOf)).toEqual([
      {
        mode: 'direct',
        kind: 'handled',
        eventAgeMs: 0,
        clockAhead: true,
        queueWaitMs: undefined,
        endToEndMs: 0,
      },
    ]);
    expect((await histogram('svc_webhooks.event.age')).map(summary)).toEqual([
      {
        attributes: {
          'messaging.system': 'mail',
          'messaging.destination.name': 'opened',
          'svc_webhooks.clock_ahead': true,
        },
        count: 1,
        sum: 0,
        boundaries: BOUNDARIES,
      },
    ]);
    await stop();
  });

  it('event names nobody registered collapse to _other past the bound; each span is recorded once', async () => {
    const clock = createVirtualClock({ start: Date.parse('2024-05-01T10:00:01.123Z') });
    const { meterProvider, histogram, stop } = metered();
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
    }).onAny(() => {});
    // 100 distinct names are kept (otel/names.ts); the 101st and later are one series.
    for (let i = 0; i < 103; i++) await deliver(receiver, mailDelivery(`made_up_${i}`));
    const points = await histogram('svc_webhooks.event.age');
    expect(points).toHaveLength(101);
    const other = points.find((p) => p.attributes['messaging.destination.name'] === '_other');
    expect(other && summary(other)).toMatchObject({ count: 3, sum: 3 });
    await stop();
  });
});

describe('queue wait', () => {
  let server: FauxqsServer;
  let client: SQSClient;
  beforeAll(async () => {
    server = await startSqs();
    client = sqsClient(server.address);
  });
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });

  it('a row that waited 10 minutes while no inbox worker ran (SQLite): its wait, then end to end', async () => {
    const db = sqliteDatabase();
    // The CRM fixture's signed timestamp is 2024-05-01T10:00:00.000Z: received 5 s later.
    const clock = createVirtualClock({ start: Date.parse('2024-05-01T10:00:05.000Z') });
    const { meterProvider, histogram, stop } = metered();
    const outcomes: Outcome[] = [];
    const inbox = db.inbox({ table: uniqueTable('lag_inbox'), clock });
    await inbox.migrate();
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      handoff: inbox,
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
      onOutcome: (outcome) => outcomes.push(outcome),
    }).on('deal.won', () => {});
    expect((await deliver(receiver, crmDelivery('deal.won'))).status).toBe(200);
    await clock.advance(10 * MINUTE);
    await createInboxWorker({ receiver, inbox }).runOnce();
    expect(outcomes.map(lagOf)).toEqual([
      {
        mode: 'enqueue',
        kind: 'queued',
        eventAgeMs: 5_000,
        clockAhead: false,
        queueWaitMs: undefined,
        endToEndMs: undefined,
      },
      {
        mode: 'worker',
        kind: 'handled',
        eventAgeMs: undefined,
        clockAhead: undefined,
        queueWaitMs: 10 * MINUTE,
        endToEndMs: 10 * MINUTE + 5_000,
      },
    ]);
    const labels = { 'messaging.system': 'crm', 'messaging.destination.name': 'deal.won' };
    expect((await histogram('svc_webhooks.queue.wait')).map(summary)).toEqual([
      { attributes: labels, count: 1, sum: 600, boundaries: BOUNDARIES },
    ]);
    expect((await histogram('svc_webhooks.end_to_end.duration')).map(summary)).toEqual([
      { attributes: labels, count: 1, sum: 605, boundaries: BOUNDARIES },
    ]);
    // Age at receipt only: the worker's run does not count it again.
    expect((await histogram('svc_webhooks.event.age')).map(summary)).toEqual([
      { attributes: labels, count: 1, sum: 5, boundaries: BOUNDARIES },
    ]);
    await stop();
    await db.close();
  });

  it('an SQS job (fauxqs) that waited 4 minutes for its worker: the receipt time its MAC covers, to the handlers’ start', async () => {
    const { queueUrl } = createQueues(server);
    const clock = createVirtualClock({ start: Date.parse('2025-06-02T09:00:00.000Z') });
    const { meterProvider, histogram, stop } = metered();
    const outcomes: Outcome[] = [];
    let workerRan!: () => void;
    const ran = new Promise<void>((resolve) => {
      workerRan = resolve;
    });
    const emitter = createMailEmitter({
      clock,
      seed: 'lag-sqs',
      handler: (request) => receiver.handle(request),
    });
    const hook = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['clicked'] });
    const receiver = createMailReceiver({
      secret: hook.secret,
      handoff: createSqsHandoff({ client, queueUrl }),
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
      onOutcome: (outcome) => {
        outcomes.push(outcome);
        if (outcome.mode === 'worker') workerRan();
      },
    }).on('clicked', () => {});
    const [delivery] = await emitter.emit('clicked');
    expect(emitter.getDelivery(delivery!.id).status).toBe('succeeded');
    await clock.advance(4 * MINUTE);
    const worker = await createSqsWorker({
      client,
      queueUrl,
      receiver,
      waitTimeSeconds: 1,
      signals: [],
    }).start();
    try {
      await ran;
    } finally {
      await worker.stop();
    }
    expect(outcomes.map(lagOf)).toEqual([
      {
        mode: 'enqueue',
        kind: 'queued',
        eventAgeMs: 0,
        clockAhead: false,
        queueWaitMs: undefined,
        endToEndMs: undefined,
      },
      {
        mode: 'worker',
        kind: 'handled',
        eventAgeMs: undefined,
        clockAhead: undefined,
        queueWaitMs: 4 * MINUTE,
        endToEndMs: 4 * MINUTE,
      },
    ]);
    const labels = { 'messaging.system': 'mail', 'messaging.destination.name': 'clicked' };
    expect((await histogram('svc_webhooks.queue.wait')).map(summary)).toEqual([
      { attributes: labels, count: 1, sum: 240, boundaries: BOUNDARIES },
    ]);
    await stop();
  });

  it('a job whose receipt time was changed after its receiver wrote it is refused, and no wait is recorded', async () => {
    const clock = createVirtualClock({ start: Date.parse('2025-06-02T09:00:00.000Z') });
    const { meterProvider, histogram, stop } = metered();
    const jobs: unknown[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: {
        enqueue: async (job) => {
          jobs.push(structuredClone(job));
          return 'enqueued';
        },
      },
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
    }).on('opened', () => {});
    expect(
      (await deliver(receiver, mailDelivery('opened', { deliveryId: `dlv_${randomUUID()}` }))).status,
    ).toBe(200);
    const job = jobs[0] as { receivedAt: number };
    job.receivedAt -= 60 * MINUTE; // an hour of made-up wait
    const verdict = await receiver.runJob(job, { attempt: 1 });
    expect(verdict).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    expect(await histogram('svc_webhooks.queue.wait')).toEqual([]);
    await stop();
  });
});

describe.runIf(redisAvailable())('queue wait on BullMQ (a real redis-server)', () => {
  it('a job whose first run failed: the second run’s wait counts from the receipt, the failed run and the backoff included', async () => {
    const redis = await startRedis();
    const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
    const queueName = `lag-${process.pid}`;
    const queue = new Queue(queueName, { connection });
    // Moved by hand: 3 minutes before the worker starts, 1 more minute after the failed run.
    const clock = createManualClock(Date.parse('2024-05-01T10:00:00.123Z'));
    const { meterProvider, histogram, stop } = metered();
    const outcomes: Outcome[] = [];
    let handled!: () => void;
    const done = new Promise<void>((resolve) => {
      handled = resolve;
    });
    let fail = true;
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: createBullmqHandoff({ queue, backoffMs: 10 }),
      clock,
      logger: false,
      telemetry: createOtelTelemetry({ meterProvider }),
      onOutcome: (outcome) => {
        outcomes.push(outcome);
        if (outcome.mode === 'worker' && outcome.kind === 'failed') clock.advance(MINUTE);
        if (outcome.kind === 'handled') handled();
      },
    }).on('opened', () => {
      if (fail) {
        fail = false;
        throw new Error('database down');
      }
    });
    try {
      expect((await deliver(receiver, mailDelivery('opened'))).status).toBe(200);
      clock.advance(3 * MINUTE);
      const worker = createBullmqWorker(receiver, { queueName, connection, shutdownSignals: [] });
      try {
        await done;
      } finally {
        await worker.close();
      }
      expect(outcomes.map((o) => [o.mode, o.kind, o.attempt, o.queueWaitMs, o.endToEndMs])).toEqual([
        ['enqueue', 'queued', undefined, undefined, undefined],
        ['worker', 'failed', 1, 3 * MINUTE, undefined],
        ['worker', 'handled', 2, 4 * MINUTE, 4 * MINUTE],
      ]);
      expect((await histogram('svc_webhooks.queue.wait')).map(summary)).toEqual([
        {
          attributes: { 'messaging.system': 'mail', 'messaging.destination.name': 'opened' },
          count: 2,
          sum: 420,
          boundaries: BOUNDARIES,
        },
      ]);
    } finally {
      await stop();
      await queue.close();
      connection.disconnect();
      await redis.close();
    }
  });
});
