import { createHash } from 'node:crypto';
import { isWebhookError, type WebhookError } from '@svc/webhooks';
import { createCrmClient, createMailClient } from '@svc/webhooks/manage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CRM_TEST_TOKEN,
  createCrmApi,
  createCrmEmitter,
  createMailApi,
  createMailEmitter,
  createVirtualClock,
  MAIL_TEST_API_KEY,
} from '../../src/testing/index.js';
import { startApiServer } from './support/api-server.js';

// The clients against the project's emulated management APIs, served by real HTTP servers on
// 127.0.0.1 and called with the real fetch.
const START = Date.parse('2025-06-01T10:00:05.000Z');
const clock = createVirtualClock({ start: START });
const ok = () => new Response(null, { status: 200 });
const mail = createMailEmitter({ clock, seed: 'clients', handler: ok });
const crm = createCrmEmitter({ clock, seed: 'clients', handler: ok });
const manageClock = { now: () => clock.now(), sleep: (ms: number) => clock.advance(ms) };

let mailServer: Awaited<ReturnType<typeof startApiServer>>;
let crmServer: Awaited<ReturnType<typeof startApiServer>>;

beforeAll(async () => {
  mailServer = await startApiServer((baseUrl) =>
    createMailApi(mail, {
      baseUrl,
      keys: {
        [MAIL_TEST_API_KEY]: { scopes: ['admin'] },
        zm_live_reader: { scopes: ['read'] },
        zm_live_slow: { scopes: ['admin'], rateLimitPerMinute: 2 },
      },
    }),
  );
  crmServer = await startApiServer((baseUrl) =>
    createCrmApi(crm, { baseUrl, tokens: { [CRM_TEST_TOKEN]: ['integrations:manage'], viewer: ['x'] } }),
  );
});
afterAll(async () => {
  await mailServer.close();
  await crmServer.close();
});

async function failure(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

describe('email client over real HTTP', () => {
  const client = () =>
    createMailClient({ baseUrl: mailServer.url, apiKey: MAIL_TEST_API_KEY, clock: manageClock });

  it('webhooks: create (full secret once), list, get (masked), update, test, rotate, delete', async () => {
    const mailClient = client();
    const hook = await mailClient.createWebhook({
      url: 'https://hooks.example.com/a',
      events: ['bounced', 'delivered'],
      description: 'a',
    });
    expect(hook.secret).toBe(mail.revealSecret(hook.id));
    expect((await mailClient.listWebhooks()).map((w) => w.id)).toContain(hook.id);
    const read = await mailClient.getWebhook(hook.id);
    expect(read.secret).not.toBe(hook.secret);
    expect(read).toMatchObject({
      url: 'https://hooks.example.com/a',
      status: 'active',
      consecutiveFailures: 0,
    });
    expect(await mailClient.updateWebhook(hook.id, { description: 'b' })).toMatchObject({ description: 'b' });
    expect(await mailClient.sendTest(hook.id)).toMatchObject({ test: true, status: 'succeeded' });
    const rotated = await mailClient.rotateSecret(hook.id);
    expect(rotated).toEqual({ id: hook.id, secret: mail.revealSecret(hook.id) });
    await mailClient.deleteWebhook(hook.id);
    const gone = await failure(mailClient.getWebhook(hook.id));
    expect(gone).toMatchObject({ code: 'not_found', status: 404, apiCode: 'webhook_not_found' });
  });

  it('deliveries: filters and pages, retries one, reactivates a paused webhook', async () => {
    const mailClient = client();
    const hook = await mailClient.createWebhook({ url: 'https://hooks.example.com/b', events: ['opened'] });
    const sent = [];
    for (let i = 0; i < 5; i++) {
      sent.push(...(await mail.emit('opened')));
      await clock.advance(1_000);
    }
    const all = await mailClient.listDeliveries(hook.id);
    expect(all.data.map((a) => a.deliveryId)).toEqual(sent.map((d) => d.id).reverse());
    expect(all.nextCursor).toBeNull();
    const first = await mailClient.listDeliveries(hook.id, { limit: 2 });
    expect(first.data).toHaveLength(2);
    const second = await mailClient.listDeliveries(hook.id, { limit: 2, cursor: first.nextCursor! });
    const third = await mailClient.listDeliveries(hook.id, { limit: 2, cursor: second.nextCursor! });
    expect(third.nextCursor).toBeNull();
    expect([...first.data, ...second.data, ...third.data].map((a) => a.deliveryId)).toEqual(
      all.data.map((a) => a.deliveryId),
    );
    expect((await mailClient.listDeliveries(hook.id, { success: false })).data).toEqual([]);
    expect((await mailClient.listDeliveries(hook.id, { since: clock.now() + 1 })).data).toEqual([]);

    const retried = await mailClient.retryDelivery(hook.id, sent[0]!.id);
    expect(retried).toMatchObject({ success: true, statusCode: 200, kind: 'retry' });
    const missing = await failure(mailClient.retryDelivery(hook.id, 'nope'));
    expect(missing).toMatchObject({ code: 'not_found', apiCode: 'delivery_not_found' });

    await mailClient.updateWebhook(hook.id, { status: 'paused' });
    const refused = await failure(mailClient.retryDelivery(hook.id, sent[0]!.id));
    expect(refused).toMatchObject({ code: 'conflict', status: 409, apiCode: 'webhook_paused' });
    expect(await mailClient.reactivateWebhook(hook.id)).toMatchObject({ status: 'active', pausedAt: null });
  });

  it('auth: me, status, 401 unauthorized, 403 insufficient_scope', async () => {
    const mailClient = client();
    expect(await mailClient.status()).toEqual({ status: 'ok' });
    expect(await mailClient.me()).toMatchObject({ authType: 'api_key', role: 'api_key', scopes: ['admin'] });
    const stranger = createMailClient({ baseUrl: mailServer.url, apiKey: 'zm_live_unknown' });
    expect(await failure(stranger.listWebhooks())).toMatchObject({ code: 'unauthorized', status: 401 });
    const reader = createMailClient({ baseUrl: mailServer.url, apiKey: 'zm_live_reader' });
    await reader.listWebhooks();
    const denied = await failure(
      reader.createWebhook({ url: 'https://hooks.example.com/c', events: ['opened'] }),
    );
    expect(denied).toMatchObject({ code: 'insufficient_scope', status: 403, apiCode: 'insufficient_scope' });
    expect(denied.message).not.toContain('zm_live_reader');
  });

  it('API keys: created once with its value (stored hashed), usable, listed without value, revoked', async () => {
    const mailClient = client();
    const key = await mailClient.createApiKey({ name: 'ci', scopes: ['read'], rateLimitPerMinute: 50 });
    expect(key.value).toMatch(/^zm_live_[0-9a-f]{48}$/);
    expect(key).toMatchObject({ name: 'ci', scopes: ['read'], rateLimitPerMinute: 50, revokedAt: null });
    const listed = await mailClient.listApiKeys();
    const record = listed.find((k) => k.id === key.id)!;
    expect(record.prefix).toBe(key.value!.slice(0, 12));
    // Neither the value nor its hash is ever shown again.
    const hash = createHash('sha256').update(key.value!).digest('hex');
    expect(JSON.stringify(listed)).not.toContain(key.value!.slice(12));
    expect(JSON.stringify(listed)).not.toContain(hash);

    const ci = createMailClient({ baseUrl: mailServer.url, apiKey: key.value! });
    expect(await ci.me()).toMatchObject({ scopes: ['read'] });
    await ci.listWebhooks();
    expect(await failure(ci.createApiKey({ scopes: ['admin'] }))).toMatchObject({
      code: 'insufficient_scope',
    });

    await mailClient.revokeApiKey(key.id);
    expect(await failure(ci.me())).toMatchObject({ code: 'unauthorized' });
    expect((await mailClient.listApiKeys()).find((k) => k.id === key.id)!.revokedAt).toBe(
      new Date(clock.now()).toISOString(),
    );
    expect(await failure(mailClient.revokeApiKey('key_missing'))).toMatchObject({ code: 'not_found' });
    const bad = await failure(mailClient.createApiKey({ scopes: ['everything' as 'admin'] }));
    expect(bad).toMatchObject({ code: 'request_invalid', status: 400, apiCode: 'invalid_payload' });
  });

  it('rate limit: waits for the window the emulator announces instead of being refused', async () => {
    const waits: { reason: string; waitMs: number }[] = [];
    const statuses: number[] = [];
    const slow = createMailClient({
      baseUrl: mailServer.url,
      apiKey: 'zm_live_slow',
      clock: manageClock,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        statuses.push(response.status);
        return response;
      },
      onRateLimit: (w) => waits.push({ reason: w.reason, waitMs: w.waitMs }),
    });
    const t0 = clock.now();
    const windowEnd = (Math.floor(t0 / 60_000) + 1) * 60_000;
    // 2 calls per minute: the second empties the window, so the third waits for the next one.
    for (let i = 0; i < 5; i++) await slow.listWebhooks();
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(waits).toEqual([
      { reason: 'remaining', waitMs: windowEnd - t0 },
      { reason: 'remaining', waitMs: 60_000 },
    ]);
  });
});

describe('CRM client over real HTTP', () => {
  const client = () => createCrmClient({ baseUrl: crmServer.url, token: CRM_TEST_TOKEN });

  it('create (201 + secret), list, get, events, update, deactivate/reactivate, rotate, deliveries, delete', async () => {
    const crmClient = client();
    const hook = await crmClient.createWebhook({
      name: 'sales',
      url: 'https://hooks.example.com/crm',
      events: ['deal.won'],
    });
    expect(hook.secret).toBe(crm.revealSecret(hook.id));
    expect((await crmClient.listWebhooks()).map((w) => w.id)).toContain(hook.id);
    expect(await crmClient.getWebhook(hook.id)).toMatchObject({ name: 'sales', active: true });
    expect(await crmClient.listEventNames()).toContain('deal.won');
    expect(await crmClient.updateWebhook(hook.id, { active: false })).toMatchObject({ active: false });
    expect(await crmClient.reactivateWebhook(hook.id)).toMatchObject({ active: true });
    const [delivery] = await crm.emit('deal.won');
    expect(await crmClient.listDeliveries(hook.id)).toMatchObject([
      { id: delivery!.id, success: true, statusCode: 200, attempts: 1, event: 'deal.won' },
    ]);
    expect((await crmClient.rotateSecret(hook.id)).secret).toBe(crm.revealSecret(hook.id));
    await crmClient.deleteWebhook(hook.id);
    expect(await failure(crmClient.getWebhook(hook.id))).toMatchObject({ code: 'not_found' });
  });

  it('401 and 403 (insufficient_permission maps to insufficient_scope)', async () => {
    const stranger = createCrmClient({ baseUrl: crmServer.url, token: 'nope' });
    expect(await failure(stranger.listWebhooks())).toMatchObject({ code: 'unauthorized' });
    const viewer = createCrmClient({ baseUrl: crmServer.url, token: 'viewer' });
    expect(await failure(viewer.listWebhooks())).toMatchObject({
      code: 'insufficient_scope',
      status: 403,
      apiCode: 'insufficient_permission',
    });
  });

  it('refused URL and bad input are request_invalid with the service code', async () => {
    const error = await failure(
      client().createWebhook({ name: 'x', url: 'http://169.254.169.254/latest', events: ['deal.won'] }),
    );
    expect(error).toMatchObject({ code: 'request_invalid', status: 422, apiCode: 'webhook_url_refused' });
  });
});
