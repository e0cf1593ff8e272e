/**
 * Payload drift end to end: the testing emitter sends signed deliveries with two fields this version
 * does not know, and one event it does not know; `onOutcome`, the log line (once per process) and the
 * `svc_webhooks.drift` counter of the real OpenTelemetry SDK report exactly those paths, never a
 * value.
 */
import { metrics } from '@opentelemetry/api';
import {
  type DataPoint,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import {
  createCrmReceiver,
  createMailReceiver,
  type LogEntry,
  type MailPayloadOf,
  type Outcome,
} from '@svc/webhooks';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { createMailEmitter, type Overrides } from '@svc/webhooks/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { rememberDrift } from '../../src/core/drift-log.js';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { CRM_SECRET, crmDelivery, deliver, mailDelivery } from './support.js';

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

afterAll(() => metrics.disable());

async function driftPoints(reader: TestReader) {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === 'svc_webhooks.drift')
    .flatMap((metric) => metric.dataPoints as DataPoint<number>[])
    .map(({ attributes, value }) => ({ attributes, value }));
}

/** A receiver recording its outcomes, log lines and metrics; the emitter delivering to it. */
function setUp() {
  const outcomes: Outcome[] = [];
  const logs: LogEntry[] = [];
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const emitter = createMailEmitter({ handler: (request) => receiver.handle(request) });
  const { secret } = emitter.createWebhook({
    url: 'https://hooks.example.com/mail',
    events: ['delivered', 'bounced'],
  });
  const receiver = createMailReceiver({
    secret,
    logger: (entry) => void logs.push(entry),
    onOutcome: (outcome) => void outcomes.push(outcome),
    telemetry: createOtelTelemetry({ meterProvider }),
  }).onAny(() => {});
  // The emitter sends only the events this version knows: a newer service's event, signed with the
  // same secret by node:crypto.
  const sendUnknown = () => deliver(receiver, mailDelivery('warmed_up', { secret }));
  return { emitter, outcomes, logs, reader, sendUnknown };
}

const drifted = { tier: 'gold-secret-value', routing: { pool: 'pool-secret-value' } } as Overrides<
  MailPayloadOf<'delivered'>
>;

describe('payload drift', () => {
  it('two new fields and one new event: onOutcome, one log line each, the counter; no values', async () => {
    const { emitter, outcomes, logs, reader, sendUnknown } = setUp();
    await emitter.emit('delivered', drifted);
    await emitter.emit('delivered', drifted);
    await emitter.emit('bounced', { to: 'ana@example.com' });
    await sendUnknown();

    expect(outcomes.map(({ event, kind, drift }) => ({ event, kind, drift }))).toEqual([
      { event: 'delivered', kind: 'handled', drift: ['tier', 'routing'] },
      { event: 'delivered', kind: 'handled', drift: ['tier', 'routing'] },
      { event: 'bounced', kind: 'handled', drift: undefined },
      { event: 'warmed_up', kind: 'ignored', drift: [''] },
    ]);
    expect(outcomes[2]).not.toHaveProperty('drift');

    const driftLogs = logs.filter(({ fields }) => 'path' in fields);
    expect(driftLogs).toEqual([
      {
        level: 'warn',
        message: 'webhook payload has a field this version does not know',
        fields: { service: 'mail', event: 'delivered', path: 'tier' },
      },
      {
        level: 'warn',
        message: 'webhook payload has a field this version does not know',
        fields: { service: 'mail', event: 'delivered', path: 'routing' },
      },
      {
        level: 'warn',
        message: 'webhook event is one this version does not know',
        fields: { service: 'mail', event: 'warmed_up', path: '' },
      },
    ]);

    const points = await driftPoints(reader);
    const attributes = (event: string, path: string) => ({
      'messaging.system': 'mail',
      'messaging.destination.name': event,
      'svc_webhooks.drift.path': path,
    });
    expect(points).toEqual(
      expect.arrayContaining([
        { attributes: attributes('delivered', 'tier'), value: 2 },
        { attributes: attributes('delivered', 'routing'), value: 2 },
        { attributes: attributes('warmed_up', ''), value: 1 },
      ]),
    );
    expect(points).toHaveLength(3);

    const everything = JSON.stringify({ outcomes, logs, points });
    expect(everything).not.toContain('secret-value');
  });

  it('logged once per process: a second receiver seeing the same paths logs nothing, still counts', async () => {
    const { emitter, outcomes, logs, reader } = setUp();
    await emitter.emit('delivered', drifted);
    expect(outcomes[0]?.drift).toEqual(['tier', 'routing']);
    expect(logs.filter(({ fields }) => 'path' in fields)).toEqual([]);
    expect((await driftPoints(reader)).map(({ value }) => value)).toEqual([1, 1]);
  });

  it('CRM: new envelope and data fields by path; a delivery without drift reports none', async () => {
    const outcomes: Outcome[] = [];
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      logger: false,
      onOutcome: (outcome) => void outcomes.push(outcome),
    }).onAny(() => {});
    await deliver(
      receiver,
      crmDelivery('deal.won', { data: { deal_id: 'd_1', title: 'T', value: 1, owner: 'x' } }),
    );
    await deliver(receiver, crmDelivery('deal.won'));
    expect(outcomes.map(({ drift }) => drift)).toEqual([['data.owner'], undefined]);
  });

  it('hand-off mode: the drift is the enqueue outcome’s, counted once at receipt', async () => {
    const outcomes: Outcome[] = [];
    const jobs: HandoffJob[] = [];
    const emitter = createMailEmitter({ handler: (request) => receiver.handle(request) });
    const { secret } = emitter.createWebhook({
      url: 'https://hooks.example.com/mail',
      events: ['delivered'],
    });
    const receiver = createMailReceiver({
      secret,
      logger: false,
      onOutcome: (outcome) => void outcomes.push(outcome),
      handoff: {
        async enqueue(job) {
          jobs.push(job);
          return 'enqueued' as const;
        },
      },
    });
    await emitter.emit('delivered', { queued_by: 'x' } as Overrides<MailPayloadOf<'delivered'>>);
    expect(jobs).toHaveLength(1);
    expect(outcomes.map(({ mode, kind, drift }) => ({ mode, kind, drift }))).toEqual([
      { mode: 'enqueue', kind: 'queued', drift: ['queued_by'] },
    ]);
  });

  // Last: it fills this process's set of remembered paths.
  it('past 1,000 remembered paths in the process, a new path is counted as _other and not logged', async () => {
    const { emitter, logs, reader } = setUp();
    for (let i = 0; i < 1_000; i++) rememberDrift('filler', 'e', `p${i}`);
    await emitter.emit('delivered', { brand_new: 1 } as Overrides<MailPayloadOf<'delivered'>>);
    expect(logs.filter(({ fields }) => 'path' in fields)).toEqual([]);
    expect(
      (await driftPoints(reader)).map(({ attributes }) => attributes['svc_webhooks.drift.path']),
    ).toEqual(['_other']);
  });
});
