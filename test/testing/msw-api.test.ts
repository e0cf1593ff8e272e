import {
  CRM_TEST_TOKEN,
  createCrmEmitter,
  createMailApi,
  createMailEmitter,
  createVirtualClock,
  MAIL_TEST_API_KEY,
} from '@svc/webhooks/testing';
import { crmApiHandlers, mailApiHandlers } from '@svc/webhooks/testing/msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const START = Date.parse('2025-03-01T12:00:30.000Z');
const clock = createVirtualClock({ start: START });
const mail = createMailEmitter({ clock, handler: () => new Response(null, { status: 200 }) });
const crm = createCrmEmitter({ clock, handler: () => new Response(null, { status: 200 }) });
const msw = setupServer(
  ...mailApiHandlers(mail, {
    keys: {
      [MAIL_TEST_API_KEY]: { scopes: ['admin'] },
      zm_live_reader: { scopes: ['read'] },
      zm_live_sender: { scopes: ['send'], rateLimitPerMinute: 3 },
    },
    sessions: { 'jwt.session': { scopes: ['admin'] } },
  }),
  ...crmApiHandlers(crm, {
    tokens: { [CRM_TEST_TOKEN]: ['integrations:manage'], viewer: ['contacts:read'] },
  }),
);
beforeAll(() => msw.listen({ onUnhandledRequest: 'error' }));
afterAll(() => msw.close());

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the mocked APIs, checked by the assertions.
type Json = any;
const asJson = (value: unknown): Json => value;
const MAIL = 'https://api.svcmail.test';
const CRM = 'https://api.svccrm.test';
const call = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
) =>
  fetch(url, {
    method: init.method ?? 'GET',
    headers: { 'Content-Type': 'application/json', ...init.headers },
    ...(init.body === undefined
      ? {}
      : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
const admin = { 'X-API-Key': MAIL_TEST_API_KEY };

describe('mocked email API', () => {
  it('publishes its OpenAPI description at /docs/json and /docs, with the per-IP rate-limit headers', async () => {
    const document = await call(`${MAIL}/docs/json`)
      .then((r) => r.json())
      .then(asJson);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: MAIL }]);
    const page = await call(`${MAIL}/docs`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('x-ratelimit-limit')).toBe('500000');
    expect(await page.text()).toContain(`href="${MAIL}/docs/json"`);
  });

  it('creates (201, full secret once), reads masked, lists, updates, rotates, deletes', async () => {
    const created = await call(`${MAIL}/api/v1/webhooks`, {
      method: 'POST',
      headers: admin,
      body: { url: 'https://hooks.example.com/a', events: ['bounced'], description: 'a' },
    });
    expect(created.status).toBe(201);
    const hook = await created.json().then(asJson);
    expect(hook.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    const read = await (await call(`${MAIL}/api/v1/webhooks/${hook.id}`, { headers: admin }))
      .json()
      .then(asJson);
    expect(read.secret).toBe(`whsec_********${hook.secret.slice(-4)}`);
    const list = await (await call(`${MAIL}/api/v1/webhooks`, { headers: admin })).json().then(asJson);
    expect(list.data.map((w: { id: string }) => w.id)).toContain(hook.id);
    const patched = await call(`${MAIL}/api/v1/webhooks/${hook.id}`, {
      method: 'PATCH',
      headers: admin,
      body: { description: 'b' },
    });
    expect(await patched.json().then(asJson)).toMatchObject({ description: 'b' });
    const rotated = await (
      await call(`${MAIL}/api/v1/webhooks/${hook.id}/rotate-secret`, { method: 'POST', headers: admin })
    )
      .json()
      .then(asJson);
    expect(rotated).toEqual({ id: hook.id, secret: mail.revealSecret(hook.id) });
    const test = await (
      await call(`${MAIL}/api/v1/webhooks/${hook.id}/test`, { method: 'POST', headers: admin })
    )
      .json()
      .then(asJson);
    expect(test).toMatchObject({ event: 'delivered', test: true, status: 'succeeded' });
    const deliveries = await (await call(`${MAIL}/api/v1/webhooks/${hook.id}/deliveries`, { headers: admin }))
      .json()
      .then(asJson);
    expect(deliveries.data).toHaveLength(1);
    const deleted = await call(`${MAIL}/api/v1/webhooks/${hook.id}`, { method: 'DELETE', headers: admin });
    expect(await deleted.json().then(asJson)).toEqual({ id: hook.id, deleted: true });
    const gone = await call(`${MAIL}/api/v1/webhooks/${hook.id}`, { headers: admin });
    expect(gone.status).toBe(404);
    expect(await gone.json().then(asJson)).toMatchObject({ error: { code: 'webhook_not_found' } });
  });

  it('401 without a valid key; 403 insufficient_scope outside the scopes; a session token works', async () => {
    expect((await call(`${MAIL}/api/v1/webhooks`)).status).toBe(401);
    expect((await call(`${MAIL}/api/v1/webhooks`, { headers: { 'X-API-Key': 'zm_live_nope' } })).status).toBe(
      401,
    );
    expect(
      (await call(`${MAIL}/api/v1/webhooks`, { headers: { 'X-API-Key': 'zm_live_reader' } })).status,
    ).toBe(200);
    const refused = await call(`${MAIL}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'X-API-Key': 'zm_live_reader' },
      body: { url: 'https://hooks.example.com/b', events: ['opened'] },
    });
    expect(refused.status).toBe(403);
    expect(await refused.json().then(asJson)).toMatchObject({ error: { code: 'insufficient_scope' } });
    const session = await call(`${MAIL}/api/v1/webhooks`, {
      headers: { Authorization: 'Bearer jwt.session' },
    });
    expect(session.status).toBe(200);
    const me = await (await call(`${MAIL}/api/v1/auth/me`, { headers: { 'X-API-Key': 'zm_live_reader' } }))
      .json()
      .then(asJson);
    expect(me).toMatchObject({
      authType: 'api_key',
      role: 'api_key',
      scopes: ['read'],
      clientId: 'client_test',
    });
    expect((await call(`${MAIL}/api/status`)).status).toBe(200);
  });

  it('400 for bad JSON or fields, 422 for an internal URL', async () => {
    const bad = await call(`${MAIL}/api/v1/webhooks`, { method: 'POST', headers: admin, body: '{nope' });
    expect([bad.status, (await bad.json().then(asJson)).error.code]).toEqual([400, 'invalid_json']);
    const unknown = await call(`${MAIL}/api/v1/webhooks`, {
      method: 'POST',
      headers: admin,
      body: { url: 'https://x.example.com', events: ['nope'] },
    });
    expect([unknown.status, (await unknown.json().then(asJson)).error.code]).toEqual([
      400,
      'invalid_payload',
    ]);
    const internal = await call(`${MAIL}/api/v1/webhooks`, {
      method: 'POST',
      headers: admin,
      body: { url: 'http://169.254.169.254/', events: ['opened'] },
    });
    expect([internal.status, (await internal.json().then(asJson)).error.code]).toEqual([
      422,
      'webhook_url_refused',
    ]);
  });

  it('429 api_rate_limit_exceeded per key per minute with X-RateLimit-*, reset the next minute on the clock', async () => {
    const get = () => call(`${MAIL}/api/v1/webhooks`, { headers: { 'X-API-Key': 'zm_live_sender' } });
    const first = await get(); // 403 (scope), but counted: every call with the key counts
    expect(first.status).toBe(403);
    expect(first.headers.get('X-RateLimit-Limit')).toBe('3');
    expect(first.headers.get('X-RateLimit-Remaining')).toBe('2');
    const reset = Math.floor(START / 60_000 + 1) * 60;
    expect(first.headers.get('X-RateLimit-Reset')).toBe(String(reset));
    await get();
    await get();
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(await limited.json().then(asJson)).toMatchObject({ error: { code: 'api_rate_limit_exceeded' } });
    expect(limited.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(limited.headers.get('Retry-After')).toBe('30');
    // Another key is not affected.
    expect((await call(`${MAIL}/api/v1/webhooks`, { headers: admin })).status).toBe(200);
    await clock.advance(30_000);
    const next = await get();
    expect(next.status).toBe(403);
    expect(next.headers.get('X-RateLimit-Remaining')).toBe('2');
  });

  it('the default limit is 1000 per minute', async () => {
    const api = createMailApi(createMailEmitter({ clock: createVirtualClock({ start: 0 }) }));
    const request = () => new Request(`${MAIL}/api/v1/webhooks`, { headers: admin });
    let last: Response | undefined;
    for (let i = 0; i < 1001; i++) last = await api.handle(request());
    expect(last!.status).toBe(429);
    expect(last!.headers.get('X-RateLimit-Limit')).toBe('1000');
  });
});

describe('mocked CRM API', () => {
  const auth = { Authorization: `Bearer ${CRM_TEST_TOKEN}` };

  it('serves the crm-service §4 routes', async () => {
    const created = await call(`${CRM}/v1/webhooks`, {
      method: 'POST',
      headers: auth,
      body: { name: 'sales', url: 'https://hooks.example.com/crm', events: ['deal.won'] },
    });
    expect(created.status).toBe(201);
    const hook = await created.json().then(asJson);
    expect(hook).toMatchObject({ name: 'sales', active: true, events: ['deal.won'] });
    expect(hook.secret).toMatch(/^whsec_/);
    const events = await (await call(`${CRM}/v1/webhooks/events`, { headers: auth })).json().then(asJson);
    expect(events.data).toContain('score.rule_fired');
    const list = await (await call(`${CRM}/v1/webhooks`, { headers: auth })).json().then(asJson);
    expect(list.data[0].secret).toMatch(/^whsec_\*{8}/);
    const patched = await (
      await call(`${CRM}/v1/webhooks/${hook.id}`, { method: 'PATCH', headers: auth, body: { active: false } })
    )
      .json()
      .then(asJson);
    expect(patched.active).toBe(false);
    expect(await crm.emit('deal.won')).toEqual([]);
    await call(`${CRM}/v1/webhooks/${hook.id}`, { method: 'PATCH', headers: auth, body: { active: true } });
    await crm.emit('deal.won');
    const deliveries = await (await call(`${CRM}/v1/webhooks/${hook.id}/deliveries`, { headers: auth }))
      .json()
      .then(asJson);
    expect(deliveries.data).toMatchObject([{ statusCode: 200, attempts: 1, success: true }]);
    const rotated = await (
      await call(`${CRM}/v1/webhooks/${hook.id}/rotate-secret`, { method: 'POST', headers: auth })
    )
      .json()
      .then(asJson);
    expect(rotated.secret).not.toBe(hook.secret);
    const deleted = await call(`${CRM}/v1/webhooks/${hook.id}`, { method: 'DELETE', headers: auth });
    expect(await deleted.json().then(asJson)).toEqual({ id: hook.id, deleted: true });
  });

  it('401 without a token, 403 insufficient_permission without integrations:manage', async () => {
    expect((await call(`${CRM}/v1/webhooks`)).status).toBe(401);
    const forbidden = await call(`${CRM}/v1/webhooks`, { headers: { Authorization: 'Bearer viewer' } });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json().then(asJson)).toMatchObject({ error: { code: 'insufficient_permission' } });
    const bad = await call(`${CRM}/v1/webhooks`, {
      method: 'POST',
      headers: auth,
      body: { name: 'x', url: 'http://localhost:3000/', events: ['deal.won'] },
    });
    expect(bad.status).toBe(422);
  });
});
