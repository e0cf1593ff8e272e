/**
 * `createOtelTelemetry` with the real OpenTelemetry SDK (sdk-trace-base with an in-memory exporter,
 * sdk-metrics read on demand, the AsyncLocalStorage context manager): a span per delivery per the
 * messaging conventions with the handler's own spans inside it, the hand-off `send` span whose
 * traceparent the job carries (under its MAC) to the worker's linked `process` span, and the
 * metrics. Without an SDK nothing changes.
 */
import { Buffer } from 'node:buffer';
import { context, metrics, SpanKind, SpanStatusCode, type TracerProvider, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  type DataPoint,
  type Histogram,
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
import { createMailReceiver, type HandoffTarget, type MailReceiverOptions } from '@svc/webhooks';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { expectedMac, resigned } from '../handoff/job-mac.js';
import { deliver, MAIL_SECRET, mailDelivery, sign } from '../receivers/support.js';

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let reader: TestReader;
let meterProvider: MeterProvider;

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
  trace.disable();
  metrics.disable();
});
beforeEach(() => {
  exporter.reset();
  reader = new TestReader();
  meterProvider = new MeterProvider({ readers: [reader] });
});

function arrayTarget(fail = false): HandoffTarget & { jobs: HandoffJob[] } {
  const jobs: HandoffJob[] = [];
  return {
    jobs,
    async enqueue(job) {
      if (fail) throw new Error('queue down');
      jobs.push(structuredClone(job));
      return 'enqueued';
    },
  };
}

function receiverWith(options: Partial<MailReceiverOptions> = {}) {
  return createMailReceiver({
    secret: MAIL_SECRET,
    logger: false,
    telemetry: createOtelTelemetry({ tracerProvider, meterProvider }),
    ...options,
  });
}

/** Ends and exports a span of the app's own around `work` (an HTTP server span stands in). */
async function inAppSpan<T>(name: string, work: () => Promise<T>, provider: TracerProvider = tracerProvider) {
  return provider.getTracer('app').startActiveSpan(name, async (span) => {
    try {
      return await work();
    } finally {
      span.end();
    }
  });
}

const spanNamed = (name: string): ReadableSpan => {
  const found = exporter.getFinishedSpans().filter((span) => span.name === name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0]!;
};

async function points(name: string): Promise<DataPoint<number | Histogram>[]> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  return resourceMetrics.scopeMetrics
    .filter((scope) => scope.scope.name === '@svc/webhooks')
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
}

describe('direct mode', () => {
  it('a process span (CONSUMER) under the active span, with the handler’s own span inside it', async () => {
    const receiver = receiverWith().on('bounced', async () => {
      await tracerProvider.getTracer('app').startActiveSpan('suppress recipient', async (span) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        span.end();
      });
    });
    const delivery = mailDelivery('bounced');
    const verdict = await inAppSpan('POST /webhooks/mail', () => deliver(receiver, delivery), tracerProvider);
    expect(verdict.status).toBe(200);
    const http = spanNamed('POST /webhooks/mail');
    const process = spanNamed('process bounced');
    const own = spanNamed('suppress recipient');
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(own.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
    expect(process.attributes).toEqual({
      'messaging.system': 'mail',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': 'bounced',
      'messaging.message.id': delivery.deliveryId,
      'svc_webhooks.verdict': 'handled',
    });
    expect(process.status.code).toBe(SpanStatusCode.UNSET);
    expect(process.instrumentationScope.name).toBe('@svc/webhooks');
  });

  it('a failed delivery: error.type, status ERROR and the handler’s exception; a refusal: error.type only', async () => {
    const receiver = receiverWith().on('bounced', () => {
      throw new Error('db down');
    });
    await deliver(receiver, mailDelivery('bounced'));
    const failed = spanNamed('process bounced');
    expect(failed.attributes).toMatchObject({
      'error.type': 'handler_failed',
      'svc_webhooks.verdict': 'failed',
    });
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'handler_failed' });
    expect(failed.events.map((event) => event.attributes?.['exception.message'])).toEqual(['db down']);
    exporter.reset();
    const forged = mailDelivery('bounced');
    forged.headers['x-svcmail-sig'] = sign(forged.body, 'whsec_not_the_secret_0000');
    await deliver(receiver, forged);
    const refused = spanNamed('process');
    expect(refused.attributes).toMatchObject({
      'error.type': 'signature_mismatch',
      'svc_webhooks.verdict': 'refused',
    });
    expect(refused.attributes['messaging.destination.name']).toBeUndefined();
    expect(refused.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a refused request: the sender-chosen delivery id on the span with its controls escaped, C1 and U+2028 too', async () => {
    const receiver = receiverWith();
    const hostile = 'dlv\u001b[2J\u009b31m\u0085\u2028\u2029\u202e\ttab';
    const forged = mailDelivery('bounced', { deliveryId: hostile });
    forged.headers['x-svcmail-sig'] = sign(forged.body, 'whsec_not_the_secret_0000');
    await deliver(receiver, forged);
    const id = String(spanNamed('process').attributes['messaging.message.id']);
    expect(id).toBe('dlv\\u001b[2J\\u009b31m\\u0085\\u2028\\u2029\\u202e\\u0009tab');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls are what must not be there
    expect(id).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
  });

  it('metrics: messaging.process.duration and svc_webhooks.deliveries by verdict and code', async () => {
    let fail = true;
    const receiver = receiverWith().on('bounced', () => {
      if (fail) throw new Error('db down');
    });
    const delivery = mailDelivery('bounced');
    await deliver(receiver, delivery);
    fail = false;
    await deliver(receiver, delivery);
    await deliver(receiver, delivery);
    const deliveries = await points('svc_webhooks.deliveries');
    const count = (verdict: string) =>
      deliveries.find((point) => point.attributes['svc_webhooks.verdict'] === verdict);
    expect(count('failed')).toMatchObject({
      value: 1,
      attributes: {
        'messaging.system': 'mail',
        'messaging.operation.name': 'process',
        'messaging.destination.name': 'bounced',
        'svc_webhooks.verdict': 'failed',
        'error.type': 'handler_failed',
      },
    });
    expect(count('handled')?.value).toBe(1);
    expect(count('duplicate')?.value).toBe(1);
    const durations = await points('messaging.process.duration');
    expect(durations.reduce((sum, point) => sum + (point.value as Histogram).count, 0)).toBe(3);
  });

  it('metrics: a delivery shed past maxInFlight counts in svc_webhooks.deliveries, not in the duration', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const running = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const receiver = receiverWith({ maxInFlight: 1 }).on('bounced', async () => {
      entered();
      await held;
    });
    const first = deliver(receiver, mailDelivery('bounced'));
    await running;
    expect((await deliver(receiver, mailDelivery('bounced'))).status).toBe(503);
    release();
    await first;
    const shed = (await points('svc_webhooks.deliveries')).find(
      (point) => point.attributes['error.type'] === 'overloaded',
    );
    expect(shed).toMatchObject({
      value: 1,
      attributes: {
        'messaging.system': 'mail',
        'messaging.operation.name': 'process',
        'svc_webhooks.verdict': 'failed',
      },
    });
    // Its body was never read: no event name. And no processing time: a burst shed would fill the
    // histogram with zeros just when its tail matters.
    expect(shed!.attributes['messaging.destination.name']).toBeUndefined();
    const durations = await points('messaging.process.duration');
    expect(
      durations.map((point) => [point.attributes['svc_webhooks.verdict'], (point.value as Histogram).count]),
    ).toEqual([['handled', 1]]);
  });
});

describe('hand-off', () => {
  /** One delivery through a hand-off receiver, inside an app span (the HTTP server span). */
  async function handedOff(receiving: ReturnType<typeof receiverWith>) {
    const delivery = mailDelivery('bounced');
    await inAppSpan('POST /webhooks/mail', () => deliver(receiving, delivery));
    return delivery;
  }

  it('a send span (PRODUCER) at enqueue; its traceparent goes into the job and the worker’s process span continues the trace, linked to it', async () => {
    const target = arrayTarget();
    const receiving = receiverWith({ handoff: target });
    await handedOff(receiving);
    const send = spanNamed('send bounced');
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(send.attributes).toMatchObject({
      'messaging.operation.type': 'send',
      'svc_webhooks.verdict': 'queued',
    });
    const { traceId, spanId } = send.spanContext();
    const job = target.jobs[0]!;
    expect(job.traceparent).toBe(`00-${traceId}-${spanId}-01`);

    const worker = receiverWith().on('bounced', () => {
      tracerProvider.getTracer('app').startSpan('in the handler').end();
    });
    exporter.reset();
    // The worker process has no active span of its own here: the job's context is the parent.
    expect((await worker.runJob(JSON.parse(JSON.stringify(job)), { attempt: 2 })).kind).toBe('handled');
    const process = spanNamed('process bounced');
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.spanContext().traceId).toBe(traceId);
    expect(process.parentSpanContext?.spanId).toBe(spanId);
    expect(process.links.map((link) => link.context.spanId)).toEqual([spanId]);
    expect(process.attributes).toMatchObject({
      'messaging.message.id': job.deliveryId,
      'messaging.destination.name': 'bounced',
      'svc_webhooks.attempt': 2,
      'svc_webhooks.verdict': 'handled',
    });
    expect(spanNamed('in the handler').parentSpanContext?.spanId).toBe(process.spanContext().spanId);
  });

  it('the job’s MAC covers its traceparent: one changed, added or removed is job_invalid, and no span trusts it', async () => {
    const target = arrayTarget();
    await handedOff(receiverWith({ handoff: target }));
    const job = target.jobs[0]!;
    // The MAC as docs/handoff.md states it, computed with node:crypto: the traceparent is its tenth field.
    const { mac, ...signed } = job;
    expect(mac).toBe(expectedMac(MAIL_SECRET, signed));
    let ran = 0;
    const worker = receiverWith().on('bounced', () => {
      ran++;
    });
    exporter.reset();
    const other = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const { traceparent: _dropped, ...without } = job;
    for (const tampered of [{ ...job, traceparent: other }, without]) {
      const verdict = await worker.runJob(tampered, { attempt: 1 });
      expect(verdict).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    }
    // Re-signed by someone holding the secret, a malformed one is still refused (bounded, validated).
    for (const traceparent of ['00-zz', `01-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, 'x'.repeat(10_000)]) {
      const forged = resigned(job, MAIL_SECRET, { traceparent });
      expect(await worker.runJob(forged, { attempt: 1 })).toMatchObject({
        kind: 'refused',
        code: 'job_invalid',
      });
    }
    expect(ran).toBe(0);
    expect(exporter.getFinishedSpans()).toEqual([]);
    // The job as its receiver wrote it still runs.
    expect((await worker.runJob(job, { attempt: 1 })).kind).toBe('handled');
    expect(Buffer.from(job.body, 'base64').length).toBeGreaterThan(0);
  });

  it('a job written without telemetry carries no traceparent and runs as before', async () => {
    const target = arrayTarget();
    const receiving = createMailReceiver({ secret: MAIL_SECRET, handoff: target, logger: false });
    await deliver(receiving, mailDelivery('bounced'));
    const job = target.jobs[0]!;
    expect(job).not.toHaveProperty('traceparent');
    const worker = receiverWith().on('bounced', () => {});
    expect((await worker.runJob(job, { attempt: 1 })).kind).toBe('handled');
    const process = spanNamed('process bounced');
    expect(process.parentSpanContext).toBeUndefined();
    expect(process.links).toEqual([]);
  });

  it('counts 503 handoff_unavailable at enqueue and the dead letters an engine reports', async () => {
    const receiving = receiverWith({ handoff: arrayTarget(true) });
    expect((await deliver(receiving, mailDelivery('bounced'))).status).toBe(503);
    const worker = receiverWith();
    worker.reportJobError(new Error('db down'), {
      message: 'dead-lettered after 3 attempts',
      deadLetter: true,
    });
    const deliveries = await points('svc_webhooks.deliveries');
    expect(deliveries).toEqual([
      expect.objectContaining({
        value: 1,
        attributes: expect.objectContaining({
          'messaging.operation.name': 'send',
          'error.type': 'handoff_unavailable',
          'svc_webhooks.verdict': 'failed',
        }),
      }),
    ]);
    // send is not processing: no duration point for it.
    expect(await points('messaging.process.duration')).toEqual([]);
    expect(await points('svc_webhooks.dead_letters')).toEqual([
      expect.objectContaining({ value: 1, attributes: { 'messaging.system': 'mail' } }),
    ]);
  });
});

describe('without an SDK, and with one registered later', () => {
  it('no provider registered: verdicts and jobs as without telemetry, no traceparent', async () => {
    const target = arrayTarget();
    const telemetry = createOtelTelemetry();
    const receiving = createMailReceiver({ secret: MAIL_SECRET, handoff: target, logger: false, telemetry });
    expect((await deliver(receiving, mailDelivery('bounced'))).kind).toBe('queued');
    expect(target.jobs[0]).not.toHaveProperty('traceparent');
    let ran = 0;
    const worker = createMailReceiver({ secret: MAIL_SECRET, logger: false, telemetry }).on('bounced', () => {
      ran++;
    });
    expect((await worker.runJob(target.jobs[0], { attempt: 1 })).kind).toBe('handled');
    expect(ran).toBe(1);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('providers registered globally after the receiver was created are used', async () => {
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      logger: false,
      telemetry: createOtelTelemetry(),
    }).on('bounced', () => {});
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    try {
      await deliver(receiver, mailDelivery('bounced'));
      expect(spanNamed('process bounced').attributes['svc_webhooks.verdict']).toBe('handled');
      expect((await points('svc_webhooks.deliveries')).map((point) => point.value)).toEqual([1]);
    } finally {
      trace.disable();
      metrics.disable();
    }
  });
});
