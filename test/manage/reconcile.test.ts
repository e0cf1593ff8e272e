/**
 * Reconciliation on a schedule, on the virtual clock: the reference emitters deliver over real HTTP to
 * the project's receivers behind a real Express server; the reconcilers read the emulated management
 * APIs, themselves behind real HTTP servers, and compare with the receivers' dedup store.
 */
import type { DedupStore, LogEntry } from '@svc/webhooks';
import { createCrmReceiver, createMailReceiver, createMemoryStore } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import {
  createCrmClient,
  createMailClient,
  createReconciler,
  createStoreHolder,
  type ReconcileReport,
} from '@svc/webhooks/manage';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CRM_TEST_TOKEN,
  createCrmApi,
  createCrmEmitter,
  createMailApi,
  createMailEmitter,
  createVirtualClock,
  type VirtualClock,
} from '../../src/testing/index.js';
import { startServer } from '../testing/support/servers.js';
import { startApiServer } from './support/api-server.js';

// 08:00 sharp: the reconcilers' windows are aligned to their 10 minutes.
const START = Date.parse('2025-06-02T08:00:00.000Z');
const MINUTE = 60_000;
const KEY = 'zm_live_reconcile';
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Counts per delivery id of what the receivers' handlers ran, and the ids every request carried. */
function tally() {
  const handled = new Map<string, number>();
  const seen: string[] = [];
  return {
    handled,
    seen,
    count: (id: string) => handled.set(id, (handled.get(id) ?? 0) + 1),
  };
}

/** One email world: emitter, emulated API (5 calls a minute, an outage switch), receiver and store. */
async function mailWorld() {
  const clock = createVirtualClock({ start: START });
  const emitter = createMailEmitter({ clock, seed: 'reconcile', allowPrivateNetworks: true });
  const store = createMemoryStore({ clock });
  const t = tally();
  const health = { receiver: true, api: true };
  const statuses: number[] = [];
  let api: ReturnType<typeof createMailApi> | undefined;
  const server = await startApiServer((baseUrl) => {
    api = createMailApi(emitter, { baseUrl, keys: { [KEY]: { scopes: ['admin'], rateLimitPerMinute: 5 } } });
    const mailApi = api;
    return {
      // The service down: 503 before the API counts the call.
      handle: (request: Request) =>
        health.api
          ? mailApi.handle(request)
          : Promise.resolve(Response.json({ error: { code: 'unavailable' } }, { status: 503 })),
    };
  });
  const receivers = await startServer();
  closers.push(server.close, receivers.close);
  const app = express();
  app.use((req, _res, next) => {
    t.seen.push(String(req.headers['x-svcmail-id']));
    next();
  });
  receivers.use(app);
  const client = createMailClient({
    baseUrl: server.url,
    apiKey: KEY,
    clock,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    },
  });
  const hook = await client.createWebhook({
    url: `${receivers.url}/webhooks/mail`,
    events: ['delivered', 'bounced', 'opened'],
  });
  const receiver = createMailReceiver({ secret: hook.secret!, dedup: store, logger: false }).onAny(
    (event) => {
      if (!health.receiver) throw new Error('database down');
      t.count(event.deliveryId);
    },
  );
  app.post('/webhooks/mail', createExpressMiddleware(receiver));
  // Another user of the key spends this minute's calls.
  const spendWindow = async () => {
    for (let i = 0; i < 5; i++)
      await api!.handle(new Request(`${server.url}/api/v1/webhooks`, { headers: { 'X-API-Key': KEY } }));
  };
  return { clock, emitter, store, client, hook, health, statuses, spendWindow, ...t };
}

function reconcilerOf(
  world: {
    clock: VirtualClock;
    store: DedupStore;
    client: ReturnType<typeof createMailClient> | ReturnType<typeof createCrmClient>;
  },
  reports: ReconcileReport[],
  logs: LogEntry[] = [],
  onReport?: (report: ReconcileReport) => void,
) {
  return createReconciler({
    client: world.client,
    holder: createStoreHolder(world.store),
    lock: world.store,
    clock: world.clock,
    everyMs: 10 * MINUTE,
    logger: (entry) => logs.push(entry),
    onReport: (report) => {
      reports.push(report);
      onReport?.(report);
    },
  });
}

/** The outage: 10 deliveries fail all 3 attempts (the webhook pauses), one more is cut short by it. */
async function outage(world: Awaited<ReturnType<typeof mailWorld>>) {
  const { emitter, clock } = world;
  world.health.receiver = false;
  await clock.advance(1_000);
  const failed = [];
  for (let i = 0; i < 10; i++) failed.push(...(await emitter.emit('delivered')));
  await clock.advance(30_000);
  const [cut] = await emitter.emit('bounced');
  await clock.runAll();
  return [cut!.id, ...failed.map((d) => d.id)];
}

const zero = { foundMissing: 0, resent: 0, recovered: 0, notRecoverable: 0, historyGap: 0 };

describe('reconciliation of the email service', () => {
  it('after an outage that paused the webhook: reactivated, each delivery resent once and handled once, exact counts', async () => {
    const world = await mailWorld();
    const { clock, emitter, hook } = world;
    const [fine] = await emitter.emit('opened');
    const lost = await outage(world);
    expect(emitter.getWebhook(hook.id)).toMatchObject({ status: 'paused', consecutiveFailures: 10 });
    world.health.receiver = true;

    const reports: ReconcileReport[] = [];
    const logs: LogEntry[] = [];
    const reconciler = reconcilerOf(world, reports, logs);
    const before = world.seen.length;
    reconciler.start(); // 08:02:01
    await clock.advance(31 * MINUTE);
    await reconciler.stop();

    // 08:02:01 (window to 07:50): nothing yet, but the paused webhook is reactivated at once.
    // 08:12:01 (to 08:00): the outage is not in it yet. 08:22:01 (to 08:10): every lost delivery.
    expect(reports.map((r) => [r.status, r.window.to, r.counts])).toEqual([
      ['done', '2025-06-02T07:50:00.000Z', zero],
      ['done', '2025-06-02T08:00:00.000Z', zero],
      ['done', '2025-06-02T08:10:00.000Z', { ...zero, foundMissing: 11, resent: 11, recovered: 11 }],
      ['done', '2025-06-02T08:20:00.000Z', zero],
    ]);
    expect(reports[0]!.reactivated).toEqual([hook.id]);
    expect(emitter.getWebhook(hook.id).status).toBe('active');
    // Oldest first: the delivery cut short by the pause last failed before the other ten.
    expect(reports[2]!.missing.map((i) => i.deliveryId)).toEqual(lost);
    expect(reports[2]!.missing.every((i) => i.outcome === 'recovered' && i.statusCode === 200)).toBe(true);
    // Resent once each, handled once each; the delivery that got through was never resent.
    expect(world.seen.slice(before)).toEqual(lost);
    for (const id of [...lost, fine!.id]) expect(world.handled.get(id), id).toBe(1);
    // The 13 calls of the third pass at 5 a minute: paced by the answers' headers, never refused.
    expect(world.statuses.every((s) => s === 200 || s === 201)).toBe(true);
    expect(reports.map((r) => r.nextRunAt! - Date.parse(r.startedAt))).toEqual([
      10 * MINUTE,
      10 * MINUTE,
      10 * MINUTE,
      10 * MINUTE,
    ]);
    const warnings = logs.filter((e) => e.level === 'warn').map((e) => e.message);
    expect(warnings).toEqual([
      'reconcile email: 11 found missing, 11 resent, 11 recovered, 0 not recoverable, 0 history gap',
    ]);
  });

  it('two reconcilers started together: one works the window, the other skips it; each delivery resent once', async () => {
    const world = await mailWorld();
    const lost = await outage(world);
    world.health.receiver = true;
    await world.clock.advanceTo(START + 13 * MINUTE); // the next window holds the outage
    const reports: ReconcileReport[][] = [[], []];
    const reconcilers = reports.map((r) => reconcilerOf(world, r));
    const before = world.seen.length;
    for (const reconciler of reconcilers) reconciler.start();
    await world.clock.advance(15 * MINUTE);
    await Promise.all(reconcilers.map((r) => r.stop()));

    expect(world.seen.slice(before)).toEqual(lost);
    for (const id of lost) expect(world.handled.get(id), id).toBe(1);
    // Each window was worked by exactly one of the two.
    for (const at of [0, 1]) {
      const statuses = [reports[0]![at]!.status, reports[1]![at]!.status].sort();
      expect(statuses).toEqual(['done', 'skipped']);
    }
    const done = reports.flat().filter((r) => r.status === 'done');
    expect(done.map((r) => r.counts)).toEqual([
      { ...zero, foundMissing: 11, resent: 11, recovered: 11 },
      zero,
    ]);
    const skipped = reports.flat().filter((r) => r.status === 'skipped');
    expect(skipped.every((r) => r.reason?.startsWith('another reconciler') && r.missing.length === 0)).toBe(
      true,
    );
  });

  it('the service answering 503, then 429: waited out with a backoff, then the window is reconciled', async () => {
    const world = await mailWorld();
    world.health.receiver = false;
    const lost = [];
    for (let i = 0; i < 2; i++) lost.push(...(await world.emitter.emit('bounced')));
    await world.clock.runAll();
    world.health.receiver = true;
    await world.clock.advanceTo(START + 13 * MINUTE + 30_000);
    world.health.api = false;
    world.statuses.length = 0;
    let downs = 0;
    const reports: ReconcileReport[] = [];
    const logs: LogEntry[] = [];
    const reconciler = reconcilerOf(world, reports, logs, (report) => {
      if (report.status !== 'unreachable' || ++downs < 2) return;
      // Back, but another user of the key has spent this minute's calls.
      world.health.api = true;
      void world.clock.track(world.spendWindow());
    });
    reconciler.start();
    await world.clock.advance(5 * MINUTE);
    await reconciler.stop();

    expect(
      reports.map((r) => [r.status, r.error?.code ?? null, r.nextRunAt! - Date.parse(r.finishedAt)]),
    ).toEqual([
      ['unreachable', 'api_unavailable', 5_000],
      ['unreachable', 'api_unavailable', 10_000],
      ['done', null, reports[2]!.nextRunAt! - Date.parse(reports[2]!.finishedAt)],
    ]);
    expect(logs.filter((e) => e.message.startsWith('reconcile: cannot reach')).map((e) => e.message)).toEqual(
      [
        expect.stringMatching(
          /^reconcile: cannot reach the email API \(api_unavailable: .*\); retrying in 5 s$/,
        ),
        expect.stringMatching(
          /^reconcile: cannot reach the email API \(api_unavailable: .*\); retrying in 10 s$/,
        ),
      ],
    );
    // 503, 503, then a 429 waited out until the key's window reset at 08:14.
    expect(world.statuses.slice(0, 3)).toEqual([503, 503, 429]);
    expect(world.statuses.slice(3).every((s) => s === 200)).toBe(true);
    expect(Date.parse(reports[2]!.startedAt)).toBe(START + 13 * MINUTE + 45_000);
    expect(Date.parse(reports[2]!.finishedAt)).toBeGreaterThanOrEqual(START + 14 * MINUTE);
    expect(reports[2]!.counts).toEqual({ ...zero, foundMissing: 2, resent: 2, recovered: 2 });
    for (const id of lost.map((d) => d.id)) expect(world.handled.get(id), id).toBe(1);
  });

  it('never resends what the receiver holds: a copy that arrives after the pass looked is not resent', async () => {
    const world = await mailWorld();
    world.health.receiver = false;
    const [raced] = await world.emitter.emit('bounced');
    const [failed] = await world.emitter.emit('bounced');
    await world.clock.runAll();
    world.health.receiver = true;
    await world.clock.advanceTo(START + 13 * MINUTE);
    // Right after the pass's first look, a copy of `raced` reaches the receiver some other way.
    const holder = createStoreHolder(world.store);
    let looks = 0;
    const reports: ReconcileReport[] = [];
    const reconciler = createReconciler({
      client: world.client,
      lock: world.store,
      clock: world.clock,
      logger: false,
      holder: {
        async held(service, ids) {
          const held = await holder.held(service, ids);
          if (++looks === 1) {
            const key = `mail:delivery:${raced!.id}`;
            const claim = await world.store.claim(key, { leaseMs: MINUTE });
            if (claim.status === 'claimed')
              await world.store.complete(key, claim.token, { ttlMs: 86_400_000 });
          }
          return held;
        },
      },
      onReport: (report) => reports.push(report),
    });
    const before = world.seen.length;
    const report = await reconciler.runOnce();
    expect(world.seen.slice(before)).toEqual([failed!.id]);
    expect(report.counts).toEqual({ ...zero, foundMissing: 1, resent: 1, recovered: 1 });
    expect(report.missing.map((i) => i.deliveryId)).toEqual([failed!.id]);
    expect(report.nextRunAt).toBeNull(); // not started: no schedule
    expect(reports).toEqual([report]);
  });
});

describe('reconciliation of the CRM service', () => {
  it('reports the deliveries the receiver never got with their ids and events, once, and the span pushed out of the history', async () => {
    const clock = createVirtualClock({ start: START });
    const emitter = createCrmEmitter({ clock, seed: 'reconcile', allowPrivateNetworks: true });
    const store = createMemoryStore({ clock });
    const methods: string[] = [];
    const server = await startApiServer((baseUrl) => createCrmApi(emitter, { baseUrl }));
    const receivers = await startServer();
    closers.push(server.close, receivers.close);
    const app = express();
    receivers.use(app);
    const client = createCrmClient({
      baseUrl: server.url,
      token: CRM_TEST_TOKEN,
      clock,
      fetch: (input, init) => {
        methods.push(init?.method ?? 'GET');
        return fetch(input, init);
      },
    });
    let healthy = false;
    const t = tally();
    const hooks = {
      busy: await client.createWebhook({
        name: 'busy',
        url: `${receivers.url}/crm/busy`,
        events: ['deal.won'],
      }),
      quiet: await client.createWebhook({
        name: 'quiet',
        url: `${receivers.url}/crm/quiet`,
        events: ['contact.created'],
      }),
    };
    for (const [name, hook] of Object.entries(hooks)) {
      const receiver = createCrmReceiver({ secret: hook.secret!, dedup: store, logger: false }).onAny(
        (event) => {
          if (!healthy) throw new Error('database down');
          t.count(event.deliveryId);
        },
      );
      app.post(`/crm/${name}`, createExpressMiddleware(receiver));
    }
    const lost = [];
    for (let i = 0; i < 3; i++)
      lost.push(...(await emitter.emit('deal.won')), ...(await emitter.emit('contact.created')));
    await clock.runAll();
    healthy = true;
    for (let i = 0; i < 55; i++) {
      await emitter.emit('deal.won');
      await clock.advance(1_000);
    }
    await clock.advanceTo(START + 13 * MINUTE);

    const reports: ReconcileReport[] = [];
    const logs: LogEntry[] = [];
    const reconciler = reconcilerOf({ clock, store, client }, reports, logs);
    methods.length = 0;
    reconciler.start();
    await clock.advance(10 * MINUTE);
    await reconciler.stop();

    const quiet = lost.filter((d) => d.webhookId === hooks.quiet.id);
    expect(reports.map((r) => r.counts)).toEqual([
      { ...zero, foundMissing: 3, notRecoverable: 3, historyGap: 1 },
      // Reported once; the history is still full, so its span is still out of sight.
      { ...zero, historyGap: 1 },
    ]);
    expect(reports[0]!.missing.map((i) => [i.deliveryId, i.event, i.outcome])).toEqual(
      quiet.map((d) => [d.id, 'contact.created', 'not_recoverable']),
    );
    expect(reports[0]!.missing[0]!.reason).toContain('no route to resend');
    const oldestKept = emitter.listDeliveries(hooks.busy.id).at(-1)!;
    expect(reports[0]!.gaps).toEqual([
      {
        webhookId: hooks.busy.id,
        from: reports[0]!.window.from,
        to: oldestKept.createdAt,
        reason: 'history_limit',
      },
    ]);
    // Reading only; each lost delivery named in the log with its event, for rebuilding it.
    expect(methods.every((m) => m === 'GET')).toBe(true);
    const named = logs.filter((e) => e.message.includes('cannot be resent'));
    expect(named.map((e) => [e.fields.deliveryId, e.fields.event])).toEqual(
      quiet.map((d) => [d.id, 'contact.created']),
    );
    for (const d of lost) expect(t.handled.has(d.id)).toBe(false);
  });
});
