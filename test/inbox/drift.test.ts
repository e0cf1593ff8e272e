/**
 * Payload drift through the database inbox, on a real SQLite file and a real PostgreSQL: the testing
 * emitter sends signed deliveries with two fields this version does not know (twice) and one event it
 * does not know (its `newEvents` option); the `svc_webhooks.drift` counter (the real OpenTelemetry
 * SDK, in-memory exporter), the log line (once per path), `onOutcome`, `inbox.stats().drift` and
 * `svc-webhooks inbox drift` (the built bin, text and `--json`) report exactly those paths, never a
 * value. Drift is logged once per process, so each database's run names its own fields and event.
 */
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { createMailReceiver, type LogEntry, type Outcome } from '@svc/webhooks';
import { createOtelTelemetry } from '@svc/webhooks/otel';
import { createDirectInbox, type Inbox } from '@svc/webhooks/postgres';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryInbox } from '../../src/receiver/inbox-receipt.js';
import { buildCli, RUN_LIMIT_MS, runCli } from '../cli/support/cli.js';
import { postgresAvailable, startPostgres } from '../support/servers.js';
import { type InboxDatabase, postgresDatabase, sqliteDatabase, uniqueTable } from './support.js';

const T0 = Date.UTC(2026, 11, 1, 9, 0, 0);
const VALUE = 'secret-value';

let cli: string;
beforeAll(async () => {
  cli = await buildCli();
}, RUN_LIMIT_MS);
afterAll(() => metrics.disable());

interface Target {
  name: 'SQLite' | 'PostgreSQL';
  tag: string;
  open(): Promise<{ db: InboxDatabase; args: string[]; close(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: 'SQLite',
    tag: 'lite',
    async open() {
      const db = sqliteDatabase();
      return { db, args: ['--file', db.path], close: () => db.close() };
    },
  },
];
if (postgresAvailable())
  targets.push({
    name: 'PostgreSQL',
    tag: 'pg',
    async open() {
      const server = await startPostgres();
      const db = postgresDatabase(server.connectionString);
      return {
        db,
        args: ['--database', server.connectionString],
        close: async () => {
          await db.close();
          await server.close();
        },
      };
    },
  });

describe.each(targets)('payload drift in the inbox on $name', ({ tag, open }) => {
  let opened: Awaited<ReturnType<Target['open']>>;
  let inbox: Inbox;
  const table = uniqueTable('drift');
  // The three paths this run sends, each its own (a path is logged once per process).
  const tier = `tier_${tag}`;
  const routing = `routing_${tag}`;
  const newEvent = `warmed_up_${tag}`;

  beforeAll(async () => {
    opened = await open();
    inbox = opened.db.inbox({ table, clock: inboxClock });
    await inbox.migrate();
  }, RUN_LIMIT_MS);
  afterAll(async () => {
    await inbox?.close();
    await opened?.close();
  });
  const inboxClock = createVirtualClock({ start: T0 });

  it(
    'the counter, the log line once, onOutcome, stats() and `inbox drift` name exactly the paths',
    async () => {
      const outcomes: Outcome[] = [];
      const logs: LogEntry[] = [];
      const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
      const meterProvider = new MeterProvider({ readers: [reader] });
      const emitter = createMailEmitter({
        handler: (request) => receiver.handle(request),
        newEvents: [newEvent],
      });
      const { secret } = emitter.createWebhook({
        url: 'https://hooks.example.com/mail',
        events: ['delivered', 'bounced', newEvent],
      });
      const receiver = createMailReceiver({
        secret,
        handoff: inbox,
        logger: (entry) => void logs.push(entry),
        onOutcome: (outcome) => void outcomes.push(outcome),
        telemetry: createOtelTelemetry({ meterProvider }),
      }).onAny(() => {});

      const drifted = { [tier]: `gold-${VALUE}`, [routing]: { pool: `pool-${VALUE}` } };
      const sent = [
        ...(await emitter.emit('delivered', drifted as never)),
        ...(await inboxClock.advance(1_000).then(() => emitter.emit('delivered', drifted as never))),
        ...(await emitter.emit('bounced', { to: 'ana@example.com' })),
        ...(await inboxClock.advance(1_000).then(() => emitter.emit(newEvent, { level: VALUE }))),
      ];
      expect(sent.map(({ status }) => status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);

      // onOutcome: the enqueue outcomes; the unknown event, without a handler, is acknowledged without a row.
      expect(outcomes.map(({ event, kind, drift }) => ({ event, kind, drift }))).toEqual([
        { event: 'delivered', kind: 'queued', drift: [tier, routing] },
        { event: 'delivered', kind: 'queued', drift: [tier, routing] },
        { event: 'bounced', kind: 'queued', drift: undefined },
        { event: newEvent, kind: 'ignored', drift: [''] },
      ]);

      // The log line, once per path.
      const driftLogs = logs.filter(({ fields }) => 'path' in fields);
      const field = 'webhook payload has a field this version does not know';
      expect(driftLogs).toEqual([
        { level: 'warn', message: field, fields: { service: 'mail', event: 'delivered', path: tier } },
        { level: 'warn', message: field, fields: { service: 'mail', event: 'delivered', path: routing } },
        {
          level: 'warn',
          message: 'webhook event is one this version does not know',
          fields: { service: 'mail', event: newEvent, path: '' },
        },
      ]);
      expect(logs.filter(({ message }) => message === 'inbox drift counts not written')).toEqual([]);

      // The counter, through the SDK's in-memory exporter.
      await reader.forceFlush();
      const points = exporter
        .getMetrics()
        .at(-1)!
        .scopeMetrics.flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name === 'svc_webhooks.drift')
        .flatMap((metric) => metric.dataPoints as DataPoint<number>[])
        .map(({ attributes, value }) => ({ attributes, value }));
      const point = (event: string, path: string, value: number) => ({
        attributes: {
          'messaging.system': 'mail',
          'messaging.destination.name': event,
          'svc_webhooks.drift.path': path,
        },
        value,
      });
      expect(points).toHaveLength(3);
      expect(points).toEqual(
        expect.arrayContaining([
          point('delivered', tier, 2),
          point('delivered', routing, 2),
          point(newEvent, '', 1),
        ]),
      );
      await meterProvider.shutdown();

      // The inbox's counts: by service, event and path, durable in the database.
      const expected = [
        {
          service: 'mail',
          event: 'delivered',
          path: routing,
          deliveries: 2,
          firstSeenAt: T0,
          lastSeenAt: T0 + 1_000,
        },
        {
          service: 'mail',
          event: 'delivered',
          path: tier,
          deliveries: 2,
          firstSeenAt: T0,
          lastSeenAt: T0 + 1_000,
        },
        {
          service: 'mail',
          event: newEvent,
          path: '',
          deliveries: 1,
          firstSeenAt: T0 + 2_000,
          lastSeenAt: T0 + 2_000,
        },
      ];
      const stats = await inbox.stats();
      expect(stats.drift).toEqual(expected);
      // Three rows (the unknown event has none); the drift table holds no value.
      expect(Object.values(stats.rows).reduce((a, b) => a + b, 0)).toBe(3);

      // `svc-webhooks inbox drift`: the built bin in a process of its own.
      const json = await runCli(cli, ['inbox', 'drift', ...opened.args, '--table', table, '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ ok: true, drift: expected });
      const text = await runCli(cli, ['inbox', 'drift', ...opened.args, '--table', table]);
      expect(text.code, text.stderr).toBe(0);
      const lines = text.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^SERVICE +EVENT +PATH +DELIVERIES +FIRST SEEN +LAST SEEN$/);
      const cells = lines.slice(1).map((line) => line.split(/ {2,}/));
      const iso = (ms: number) => new Date(ms).toISOString();
      expect(cells).toEqual([
        ['mail', 'delivered', routing, '2', iso(T0), iso(T0 + 1_000)],
        ['mail', 'delivered', tier, '2', iso(T0), iso(T0 + 1_000)],
        ['mail', newEvent, '(unknown event)', '1', iso(T0 + 2_000), iso(T0 + 2_000)],
      ]);
      const crmOnly = await runCli(cli, [
        'inbox',
        'drift',
        ...opened.args,
        '--table',
        table,
        '--service',
        'crm',
      ]);
      expect(crmOnly.code, crmOnly.stderr).toBe(0);
      expect(crmOnly.stdout).toBe('');
      expect(crmOnly.stderr).toContain('no payload drift');

      const everything = JSON.stringify({
        outcomes,
        logs,
        points,
        stats,
        json: json.stdout,
        text: text.stdout,
      });
      expect(everything).not.toContain(VALUE);
    },
    RUN_LIMIT_MS,
  );

  it('a copy the service sends again counts again; a delivery without drift writes no count', async () => {
    const before = (await inbox.stats()).drift;
    const emitter = createMailEmitter({ handler: (request) => receiver.handle(request) });
    const { secret } = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['opened'] });
    const receiver = createMailReceiver({ secret, handoff: inbox, logger: false }).onAny(() => {});
    const [first] = await emitter.emit('opened', { [tier]: 1 } as never);
    await emitter.retryDelivery(first!.webhookId, first!.id);
    await emitter.emit('opened');
    const after = (await inbox.stats()).drift;
    expect(after.filter((d) => d.event === 'opened')).toEqual([
      {
        service: 'mail',
        event: 'opened',
        path: tier,
        deliveries: 2,
        firstSeenAt: T0 + 2_000,
        lastSeenAt: T0 + 2_000,
      },
    ]);
    expect(after.filter((d) => d.event !== 'opened')).toEqual(before);
  });

  it('direct mode counts it too: the handler runs in the request, the drift is in the table', async () => {
    const emitter = createMailEmitter({ handler: (request) => receiver.handle(request) });
    const { secret } = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['clicked'] });
    const ran: string[] = [];
    const receiver = createMailReceiver({
      secret,
      handoff: createDirectInbox({ inbox, transactions: opened.db.transactions() }),
      logger: false,
    }).on('clicked', (event) => void ran.push(event.deliveryId));
    const [sent] = await emitter.emit('clicked', { [routing]: 'x' } as never);
    expect(sent!.status).toBe('succeeded');
    expect(ran).toEqual([sent!.id]);
    expect((await inbox.stats()).drift.filter((d) => d.event === 'clicked')).toEqual([
      {
        service: 'mail',
        event: 'clicked',
        path: routing,
        deliveries: 1,
        firstSeenAt: T0 + 2_000,
        lastSeenAt: T0 + 2_000,
      },
    ]);
  });

  it('a drift table that is not there: the delivery is still stored and acknowledged, the failure logged', async () => {
    const other = uniqueTable('nodrift');
    const bare = opened.db.inbox({ table: other, clock: inboxClock });
    await bare.migrate();
    await opened.db.sql(`DROP TABLE ${other}_drift`);
    const logs: LogEntry[] = [];
    const emitter = createMailEmitter({ handler: (request) => receiver.handle(request) });
    const { secret } = emitter.createWebhook({ url: 'https://hooks.example.com/mail', events: ['opened'] });
    const receiver = createMailReceiver({
      secret,
      handoff: bare,
      logger: (entry) => void logs.push(entry),
    }).onAny(() => {});
    const [sent] = await emitter.emit('opened', { [tier]: VALUE } as never);
    expect(sent!.status).toBe('succeeded');
    expect((await bare.list()).rows.map(({ deliveryId }) => deliveryId)).toEqual([sent!.id]);
    expect(logs.filter(({ message }) => message === 'inbox drift counts not written')).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain(VALUE);
    await bare.close();
  });

  // Last: it fills the table.
  it('past 1,000 (service, event, path) rows a new path is counted as _other; known ones by name', async () => {
    const counts = inbox as Inbox & DeliveryInbox;
    for (let i = 0; i < 16; i++)
      await counts.countDrift!(
        'mail',
        'filler',
        Array.from({ length: 63 }, (_, j) => `p${i * 63 + j}`),
        1_000,
      );
    await counts.countDrift!('mail', 'delivered', [tier, 'brand_new', 'other_new'], 1_000);
    const drift = (await inbox.stats()).drift.filter((d) => d.event === 'delivered');
    expect(drift.map(({ path, deliveries }) => ({ path, deliveries }))).toEqual([
      { path: '_other', deliveries: 2 },
      { path: routing, deliveries: 2 },
      { path: tier, deliveries: 3 },
    ]);
  });
});
