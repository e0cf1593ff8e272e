/**
 * The inbox's observability with the real OpenTelemetry SDK (sdk-trace-base with an in-memory exporter,
 * sdk-metrics read on demand, the AsyncLocalStorage context manager): the depth gauges of
 * `createInboxMetrics` on real PostgreSQL and a SQLite file; the receiver's `send` span and the inbox
 * worker's linked `process` span of the same trace; direct mode's `process` span with the handler's
 * span inside; `onOutcome` for both; no secret or body bytes in attributes (sender text in them is
 * escaped by the same spans as every delivery's: test/otel/telemetry.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { context, metrics, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  type DataPoint,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createCrmReceiver, createMailReceiver, type Outcome } from '@svc/webhooks';
import { createInboxMetrics, createOtelTelemetry } from '@svc/webhooks/otel';
import { createDirectInbox, createInboxWorker } from '@svc/webhooks/postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import {
  forEachInboxDatabase,
  type InboxDatabase,
  openedInboxDatabase,
  sqliteDatabase,
  uniqueTable,
} from './support.js';

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const quiet = () => {};

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
  trace.disable();
  metrics.disable();
});
beforeEach(() => exporter.reset());

function metered() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const points = async (name: string): Promise<DataPoint<number>[]> => {
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as DataPoint<number>[]);
  };
  return { meterProvider, points };
}

const byStatus = (points: DataPoint<number>[]) =>
  Object.fromEntries(points.map((p) => [String(p.attributes['svc_webhooks.inbox.status']), p.value]));

function gaugeSuite(name: string, open: () => Promise<InboxDatabase>, close: () => Promise<void>) {
  describe(`inbox depth gauges on ${name}`, () => {
    const opened = openedInboxDatabase(open, close);

    it('rows by status, the oldest pending row’s age and the quarantined count; nothing after stop()', async () => {
      let now = Date.parse('2026-11-27T12:00:00.000Z');
      const clock = { now: () => now };
      const table = uniqueTable('otel_inbox');
      const inbox = opened().inbox({ table, clock });
      await inbox.migrate();
      const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet, clock });
      receiver.on('delivered', () => {});
      const { meterProvider, points } = metered();
      const gauges = createInboxMetrics({ inbox, name: 'main', meterProvider });
      // Empty: every status 0, no pending row so an age of 0.
      expect(byStatus(await points('svc_webhooks.inbox.rows'))).toMatchObject({ received: 0, handled: 0 });
      expect((await points('svc_webhooks.inbox.oldest_pending_age')).map((p) => p.value)).toEqual([0]);

      expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
      now += 30_000;
      expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
      for (let i = 0; i < 2; i++)
        expect(
          (await deliver(receiver, mailDelivery('bounced', { payload: { provider: undefined } }))).status,
        ).toBe(200);
      now += 15_000;
      const rows = byStatus(await points('svc_webhooks.inbox.rows'));
      expect(rows).toEqual({
        received: 2,
        processing: 0,
        handled: 0,
        failed: 0,
        dead: 0,
        quarantined: 2,
        superseded: 0,
      });
      const [age] = await points('svc_webhooks.inbox.oldest_pending_age');
      expect(age!.value).toBe(45);
      expect(age!.attributes).toEqual({ 'svc_webhooks.inbox.name': 'main' });
      const [quarantined] = await points('svc_webhooks.inbox.quarantined');
      expect(quarantined!.value).toBe(2);

      await createInboxWorker({ receiver, inbox }).runOnce();
      expect(byStatus(await points('svc_webhooks.inbox.rows'))).toMatchObject({ received: 0, handled: 2 });
      expect((await points('svc_webhooks.inbox.oldest_pending_age')).map((p) => p.value)).toEqual([0]);
      expect(await inbox.stats()).toEqual({
        rows: { received: 0, processing: 0, handled: 2, failed: 0, dead: 0, quarantined: 2, superseded: 0 },
        oldestPendingAgeMs: null,
        drift: [],
      });

      // After stop() a collection no longer reads the table.
      gauges.stop();
      let reads = 0;
      const stats = inbox.stats;
      inbox.stats = () => {
        reads++;
        return stats();
      };
      await points('svc_webhooks.inbox.rows');
      expect(reads).toBe(0);
    });

    it('a collection while stats() fails reports no point and does not reject', async () => {
      const { meterProvider, points } = metered();
      createInboxMetrics({
        inbox: { stats: () => Promise.reject(new Error('database down')) },
        meterProvider,
      });
      expect(await points('svc_webhooks.inbox.rows')).toEqual([]);
    });
  });
}

forEachInboxDatabase(gaugeSuite);

describe('inbox spans and outcomes (SQLite file)', () => {
  const db = sqliteDatabase();
  afterAll(() => db.close());
  const finished = () => exporter.getFinishedSpans();
  const named = (name: string) => finished().filter((s: ReadableSpan) => s.name === name);

  it('inbox mode: the receiver’s send span, then the worker’s process span in the same trace, linked; an outcome each', async () => {
    const table = uniqueTable('otel_spans');
    const inbox = db.inbox({ table });
    await inbox.migrate();
    const outcomes: Outcome[] = [];
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      handoff: inbox,
      logger: quiet,
      telemetry: createOtelTelemetry({ tracerProvider }),
      onOutcome: (o) => outcomes.push(o),
    });
    const tracer = tracerProvider.getTracer('app');
    receiver.on('deal.won', async (_event, { tx }) => {
      expect(tx).toBeDefined();
      tracer.startSpan('app write').end();
    });
    const a = crmDelivery('deal.won');
    expect((await deliver(receiver, a)).status).toBe(200);
    await createInboxWorker({ receiver, inbox, transactions: db.transactions() }).runOnce();
    const [send] = named('send deal.won');
    const [process] = named('process deal.won');
    expect(send!.kind).toBe(SpanKind.PRODUCER);
    expect(process!.kind).toBe(SpanKind.CONSUMER);
    expect(process!.spanContext().traceId).toBe(send!.spanContext().traceId);
    expect(process!.links.map((l) => l.context.spanId)).toEqual([send!.spanContext().spanId]);
    expect(process!.attributes).toMatchObject({
      'messaging.system': 'crm',
      'messaging.message.id': a.deliveryId,
      'svc_webhooks.attempt': 1,
      'svc_webhooks.verdict': 'handled',
    });
    expect(outcomes.map((o) => [o.mode, o.kind, o.attempt])).toEqual([
      ['enqueue', 'queued', undefined],
      ['worker', 'handled', 1],
    ]);
  });

  it('direct mode: one process span with the run and the handler’s span inside; one direct outcome; no secret or body bytes in attributes', async () => {
    const table = uniqueTable('otel_direct');
    const inbox = db.inbox({ table });
    await inbox.migrate();
    const outcomes: Outcome[] = [];
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: createDirectInbox({ inbox, transactions: db.transactions() }),
      logger: quiet,
      telemetry: createOtelTelemetry({ tracerProvider }),
      onOutcome: (o) => outcomes.push(o),
    });
    const tracer = tracerProvider.getTracer('app');
    receiver.on('delivered', async () => {
      tracer.startSpan('app write').end();
    });
    const id = `dlv_${randomUUID()}`;
    const answer = await deliver(
      receiver,
      mailDelivery('delivered', { deliveryId: id, messageId: 'secretive_body_value' }),
    );
    expect(answer.status).toBe(200);
    const spans = finished();
    const outer = spans.find((s) => s.name === 'process delivered' && s.parentSpanContext === undefined);
    expect(outer).toBeDefined();
    const run = spans.find(
      (s) => s.name === 'process delivered' && s.parentSpanContext?.spanId === outer!.spanContext().spanId,
    );
    expect(run).toBeDefined();
    const write = named('app write')[0]!;
    expect(write.parentSpanContext?.spanId).toBe(run!.spanContext().spanId);
    expect(outcomes.map((o) => [o.mode, o.kind])).toEqual([['direct', 'handled']]);
    const attributes = JSON.stringify(spans.map((s) => s.attributes));
    expect(attributes).not.toContain(MAIL_SECRET);
    expect(attributes).not.toContain('secretive_body_value');
    expect(run!.attributes['messaging.message.id']).toBe(id);
  });

  it('a row moved to dead counts as a dead letter once, by the worker and by direct mode', async () => {
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const deadLetters = async () => {
      const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name === 'svc_webhooks.dead_letters')
        .flatMap((metric) => metric.dataPoints as DataPoint<number>[])
        .map((p) => [p.attributes['messaging.system'], p.attributes['error.type'], p.value]);
    };
    const telemetry = createOtelTelemetry({ meterProvider });
    const failing = async () => {
      throw new Error('always');
    };
    const queued = db.inbox({ table: uniqueTable('otel_dead') });
    await queued.migrate();
    const worked = createCrmReceiver({ secret: CRM_SECRET, handoff: queued, logger: quiet, telemetry });
    worked.on('deal.won', failing);
    expect((await deliver(worked, crmDelivery('deal.won'))).status).toBe(200);
    await createInboxWorker({ receiver: worked, inbox: queued, maxAttempts: 1 }).runOnce();
    expect(await deadLetters()).toEqual([['crm', 'handler_failed', 1]]);

    const directInbox = db.inbox({ table: uniqueTable('otel_dead_direct') });
    await directInbox.migrate();
    const direct = createMailReceiver({
      secret: MAIL_SECRET,
      handoff: createDirectInbox({ inbox: directInbox, transactions: db.transactions(), maxAttempts: 1 }),
      logger: quiet,
      telemetry,
    });
    direct.on('delivered', failing);
    expect((await deliver(direct, mailDelivery('delivered'))).status).toBe(200);
    expect(await deadLetters()).toEqual([
      ['crm', 'handler_failed', 1],
      ['mail', 'handler_failed', 1],
    ]);
  });
});
