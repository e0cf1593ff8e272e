import type { Clock } from '@svc/webhooks';
import { createCrmReceiver, createMailReceiver, type MailEventName } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import {
  createCrmClient,
  createMailClient,
  type RecoveryProgress,
  recoverFailedDeliveries,
} from '@svc/webhooks/manage';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CRM_TEST_TOKEN,
  createCrmApi,
  createCrmEmitter,
  createMailApi,
  createMailEmitter,
  createVirtualClock,
} from '../../src/testing/index.js';
import { startServer } from '../testing/support/servers.js';
import { startApiServer } from './support/api-server.js';

// An outage played on the emitters, delivering over real HTTP to the project's receivers behind a
// real Express server; then a recovery run through the management clients against the emulated
// APIs, themselves behind real HTTP servers. Handler effects are counted per delivery id.
const START = Date.parse('2025-06-02T08:00:00.000Z');
const MINUTE = 60_000;
const clock = createVirtualClock({ start: START });
const mail = createMailEmitter({ clock, seed: 'recovery', allowPrivateNetworks: true });
const crm = createCrmEmitter({ clock, seed: 'recovery', allowPrivateNetworks: true });
// The client's rate-limit waits move the emulators' clock instead of blocking the test.
const manageClock: Clock = { now: () => clock.now(), sleep: (ms) => clock.advance(ms) };
const RECOVERY_KEY = 'zm_live_recovery';

let receivers: Awaited<ReturnType<typeof startServer>>;
let mailApi: Awaited<ReturnType<typeof startApiServer>>;
let crmApi: Awaited<ReturnType<typeof startApiServer>>;
const app = express();
// `mail` is the main webhook's receiver; every other email receiver stays broken.
const health = { mail: false, mailBroken: false, crm: false };
const handled = new Map<string, number>();
const seen: string[] = [];

function count(deliveryId: string): void {
  handled.set(deliveryId, (handled.get(deliveryId) ?? 0) + 1);
}

beforeAll(async () => {
  receivers = await startServer();
  app.use((req, _res, next) => {
    seen.push(String(req.headers['x-svcmail-id'] ?? req.headers['x-svc-delivery']));
    next();
  });
  receivers.use(app);
  mailApi = await startApiServer((baseUrl) =>
    // 5 calls a minute: a recovery run of a dozen calls has to pace itself.
    createMailApi(mail, { baseUrl, keys: { [RECOVERY_KEY]: { scopes: ['admin'], rateLimitPerMinute: 5 } } }),
  );
  crmApi = await startApiServer((baseUrl) => createCrmApi(crm, { baseUrl }));
});
afterAll(async () => {
  await receivers.close();
  await mailApi.close();
  await crmApi.close();
});

function mailClient(statuses: number[] = [], waits: string[] = []) {
  return createMailClient({
    baseUrl: mailApi.url,
    apiKey: RECOVERY_KEY,
    clock: manageClock,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    },
    onRateLimit: (w) => waits.push(w.reason),
  });
}

async function mailHook(path: string, events: MailEventName[]) {
  const hook = await mailClient().createWebhook({ url: `${receivers.url}${path}`, events });
  const secret = hook.secret!;
  const healthy = path === '/webhooks/mail' ? () => health.mail : () => health.mailBroken;
  const receiver = createMailReceiver({ secret }).onAny((event) => {
    if (!healthy()) throw new Error('database down');
    count(event.deliveryId);
  });
  app.post(path, createExpressMiddleware(receiver));
  return hook;
}

describe('email: outage, pause after 10 failures, recovery', () => {
  it('reactivates, resends each failed delivery once within the rate limit, every event handled once', async () => {
    const hook = await mailHook('/webhooks/mail', ['delivered', 'bounced', 'opened']);

    // Before the window: a failure that must not be retried.
    const [old] = await mail.emit('bounced');
    await clock.runAll();
    await clock.advance(60 * MINUTE);
    const windowStart = clock.now();
    health.mail = true;
    const [fine] = await mail.emit('opened');
    expect(fine!.status).toBe('succeeded');

    // The outage: 10 deliveries fail all 3 attempts (the webhook pauses), one more is cut short by the pause.
    health.mail = false;
    await clock.advance(1_000);
    const failed = [];
    for (let i = 0; i < 10; i++) failed.push(...(await mail.emit('delivered')));
    await clock.advance(30_000);
    const [cut] = await mail.emit('bounced');
    await clock.runAll();
    expect(mail.getWebhook(hook.id)).toMatchObject({ status: 'paused', consecutiveFailures: 10 });
    expect(mail.getDelivery(cut!.id)).toMatchObject({ status: 'cancelled' });
    expect(mail.getDelivery(cut!.id).attempts).toHaveLength(2);
    // email-service §3: nothing is sent while paused (these are not recorded, so not recoverable).
    expect(await mail.emit('opened')).toEqual([]);

    health.mail = true;
    await clock.advance(10 * MINUTE);
    const recoverable = [...failed.map((d) => d.id), cut!.id];
    const before = new Map(handled);
    const seenBefore = seen.length;
    const statuses: number[] = [];
    const waits: string[] = [];
    const progress: RecoveryProgress[] = [];
    const report = await recoverFailedDeliveries({
      client: mailClient(statuses, waits),
      since: new Date(windowStart - MINUTE),
      now: clock.now,
      onProgress: (p) => progress.push(p),
    });

    // Each resent exactly once (the receiver saw it once), and handled exactly once.
    expect(seen.slice(seenBefore).sort()).toEqual([...recoverable].sort());
    // Every recoverable event handled exactly once, nothing else handled again.
    for (const id of recoverable) expect(handled.get(id), id).toBe(1);
    expect(handled.get(fine!.id)).toBe(1);
    expect(handled.has(old!.id)).toBe(false);
    expect([...handled.keys()].filter((id) => !before.has(id)).sort()).toEqual([...recoverable].sort());

    expect(report).toMatchObject({
      service: 'mail',
      since: new Date(windowStart - MINUTE).toISOString(),
      dryRun: false,
      stillFailing: [],
      unconfirmed: [],
      notRecoverable: [],
      pending: [],
      skipped: [],
      stopped: null,
    });
    expect(report.webhooks).toMatchObject([{ webhookId: hook.id, reactivated: true, failed: 11, gap: null }]);
    expect(report.retried.map((i) => i.deliveryId).sort()).toEqual([...recoverable].sort());
    expect(report.succeeded.map((i) => i.deliveryId).sort()).toEqual([...recoverable].sort());
    expect(report.succeeded.every((i) => i.statusCode === 200 && i.outcome === 'succeeded')).toBe(true);
    // Oldest first: the delivery cut short by the pause last failed before the other ten.
    expect(report.retried[0]!.deliveryId).toBe(cut!.id);
    expect(mail.getWebhook(hook.id).status).toBe('active');

    // Within the rate limit: 14 calls at 5 a minute, paced by the answers' headers, never refused.
    expect(statuses.length).toBe(14);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(waits.length).toBeGreaterThanOrEqual(2);
    expect(waits.every((w) => w === 'remaining')).toBe(true);

    expect(progress.at(-1)).toEqual({ phase: 'done', done: 11, total: 11 });
    expect(progress.filter((p) => p.phase === 'retry').map((p) => p.done)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    expect(progress.filter((p) => p.phase === 'reactivate')).toEqual([
      { phase: 'reactivate', webhookId: hook.id, done: 1, total: 1 },
    ]);

    // A second run finds nothing left to do and sends nothing.
    const sent = seen.length;
    const again = await recoverFailedDeliveries({
      client: mailClient(),
      since: new Date(windowStart - MINUTE),
      now: clock.now,
    });
    expect(again.retried).toEqual([]);
    expect(again.webhooks[0]).toMatchObject({ failed: 0, reactivated: false });
    expect(seen.length).toBe(sent);
  });

  it('still failing, pending (inside the automatic schedule), dry run, and the 90-day gap', async () => {
    const hook = await mailHook('/webhooks/mail-broken', ['complained']);
    const [settled] = await mail.emit('complained');
    await clock.runAll();
    const [inFlight] = await mail.emit('complained'); // first attempt failed; the next is due in 1 minute
    const sent = seen.length;

    const dry = await recoverFailedDeliveries({
      client: mailClient(),
      since: '1h',
      webhookIds: [hook.id],
      dryRun: true,
      now: clock.now,
    });
    expect(seen.length).toBe(sent);
    expect(dry.skipped).toMatchObject([{ deliveryId: settled!.id, reason: 'dry run' }]);
    expect(dry.pending).toMatchObject([{ deliveryId: inFlight!.id, outcome: 'pending' }]);
    expect(dry.retried).toEqual([]);

    const report = await recoverFailedDeliveries({
      client: mailClient(),
      since: '100d',
      webhookIds: [hook.id],
      now: clock.now,
    });
    expect(seen.slice(sent)).toEqual([settled!.id]);
    expect(report.retried.map((i) => i.deliveryId)).toEqual([settled!.id]);
    expect(report.stillFailing).toMatchObject([
      { deliveryId: settled!.id, statusCode: 500, outcome: 'still_failing' },
    ]);
    expect(report.pending.map((i) => i.deliveryId)).toEqual([inFlight!.id]);
    expect(report.succeeded).toEqual([]);
    expect(handled.has(settled!.id)).toBe(false);
    // email-service §8: records older than 90 days are gone, so a longer window has a gap.
    expect(report.webhooks[0]!.gap).toEqual({
      from: new Date(clock.now() - 100 * 86_400_000).toISOString(),
      to: new Date(clock.now() - 90 * 86_400_000).toISOString(),
      reason: 'retention',
    });
    await clock.runAll();
  });

  it('another user of the key emptied the window: the first call gets 429 and waits for the reset', async () => {
    const hook = await mailHook('/webhooks/mail-shared', ['clicked']);
    await mail.emit('clicked');
    await clock.runAll();
    await clock.advance(MINUTE);
    // Five calls a minute: someone else spends them all (the client does not see their answers).
    for (let i = 0; i < 5; i++) {
      await fetch(`${mailApi.url}/api/v1/webhooks`, { headers: { 'X-API-Key': RECOVERY_KEY } });
    }
    const statuses: number[] = [];
    const waits: string[] = [];
    const before = clock.now();
    const report = await recoverFailedDeliveries({
      client: mailClient(statuses, waits),
      since: '1h',
      webhookIds: [hook.id],
      now: clock.now,
    });
    expect(statuses[0]).toBe(429);
    expect(waits[0]).toBe('429');
    // It resumed in the next minute window, exactly when the emulator said it would reset.
    expect(clock.now()).toBeGreaterThanOrEqual((Math.floor(before / MINUTE) + 1) * MINUTE);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    expect(report.stillFailing).toHaveLength(1); // the receiver is still down: reported, not lost
    expect(report.stopped).toBeNull();
  });

  it('a key without admin stops the run: the report says why and what was not tried', async () => {
    const hook = await mailHook('/webhooks/mail-readonly', ['complained']);
    await mail.emit('complained');
    await clock.runAll();
    const readerApi = await startApiServer((baseUrl) =>
      createMailApi(mail, { baseUrl, keys: { zm_live_reader: { scopes: ['read'] } } }),
    );
    try {
      const report = await recoverFailedDeliveries({
        client: createMailClient({ baseUrl: readerApi.url, apiKey: 'zm_live_reader' }),
        since: '1h',
        webhookIds: [hook.id],
        now: clock.now,
      });
      expect(report.stopped).toMatchObject({ code: 'insufficient_scope' });
      expect(report.skipped).toHaveLength(1);
      expect(report.retried).toEqual([]);
    } finally {
      await readerApi.close();
    }
  });
});

describe('CRM: more than 50 later deliveries push failures out of the history', () => {
  it('reports visible failures as not recoverable and the pushed-out span as a gap; sends nothing', async () => {
    const crmClient = createCrmClient({ baseUrl: crmApi.url, token: CRM_TEST_TOKEN });
    const hooks = {
      busy: await crmClient.createWebhook({
        name: 'busy',
        url: `${receivers.url}/webhooks/crm-busy`,
        events: ['deal.won'],
      }),
      quiet: await crmClient.createWebhook({
        name: 'quiet',
        url: `${receivers.url}/webhooks/crm-quiet`,
        events: ['contact.created'],
      }),
    };
    for (const [name, hook] of Object.entries(hooks)) {
      const receiver = createCrmReceiver({ secret: hook.secret! }).onAny((event) => {
        if (!health.crm) throw new Error('database down');
        count(event.deliveryId);
      });
      app.post(`/webhooks/crm-${name}`, createExpressMiddleware(receiver));
    }
    const windowStart = clock.now();
    const lost = [];
    for (let i = 0; i < 3; i++) {
      lost.push(...(await crm.emit('deal.won')), ...(await crm.emit('contact.created')));
    }
    await clock.runAll();
    await clock.advance(MINUTE);
    health.crm = true;
    for (let i = 0; i < 55; i++) {
      await crm.emit('deal.won');
      await clock.advance(1_000);
    }
    for (let i = 0; i < 5; i++) await crm.emit('contact.created');
    const quietFailures = lost.filter((d) => d.webhookId === hooks.quiet.id).map((d) => d.id);

    const methods: string[] = [];
    const handledBefore = new Map(handled);
    const sent = seen.length;
    const report = await recoverFailedDeliveries({
      client: createCrmClient({
        baseUrl: crmApi.url,
        token: CRM_TEST_TOKEN,
        fetch: (input, init) => {
          methods.push(init?.method ?? 'GET');
          return fetch(input, init);
        },
      }),
      since: new Date(windowStart),
      now: clock.now,
    });

    const busy = report.webhooks.find((w) => w.webhookId === hooks.busy.id)!;
    const oldestKept = crm.listDeliveries(hooks.busy.id).at(-1)!;
    expect(busy).toMatchObject({ failed: 0, items: [], reactivated: false });
    expect(busy.gap).toEqual({
      from: new Date(windowStart).toISOString(),
      to: oldestKept.createdAt,
      reason: 'history_limit',
    });
    const quiet = report.webhooks.find((w) => w.webhookId === hooks.quiet.id)!;
    expect(quiet).toMatchObject({ failed: 3, gap: null });
    expect(report.notRecoverable.map((i) => i.deliveryId).sort()).toEqual([...quietFailures].sort());
    expect(report.notRecoverable[0]!.reason).toContain('no route to resend');
    expect(report.retried).toEqual([]);
    // Reading only: no write call, no delivery, no handler run.
    expect(methods.every((m) => m === 'GET')).toBe(true);
    expect(seen.length).toBe(sent);
    expect(handled).toEqual(handledBefore);
  });
});
