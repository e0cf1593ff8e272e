import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import {
  CRM_TEST_TOKEN,
  createCrmEmitter,
  createMailEmitter,
  createSignedRequest,
  createVirtualClock,
  MAIL_TEST_API_KEY,
} from '@svc/webhooks/testing';
import { crmApiHandlers, mailApiHandlers } from '@svc/webhooks/testing/msw';
import express from 'express';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from './support/servers.js';

// The emitters deliver over real HTTP (globalThis.fetch, patched by msw, which lets 127.0.0.1 through)
// to the project's receivers behind a real Express server; webhooks are provisioned through the
// mocked management APIs.
const START = Date.parse('2025-03-01T12:00:00.000Z');
const clock = createVirtualClock({ start: START });
const mail = createMailEmitter({ clock, seed: 'express', allowPrivateNetworks: true });
const crm = createCrmEmitter({ clock, seed: 'express', allowPrivateNetworks: true });
const msw = setupServer(...mailApiHandlers(mail), ...crmApiHandlers(crm));
const MAIL_API = 'https://api.svcmail.test/api/v1';
const CRM_API = 'https://api.svccrm.test/v1';

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the mocked APIs, checked by the assertions.
type Json = any;

async function mailApi(method: string, path: string, body?: unknown) {
  const response = await fetch(`${MAIL_API}${path}`, {
    method,
    headers: { 'X-API-Key': MAIL_TEST_API_KEY, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function crmApi(method: string, path: string, body?: unknown) {
  const response = await fetch(`${CRM_API}${path}`, {
    method,
    headers: { Authorization: `Bearer ${CRM_TEST_TOKEN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

let server: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  msw.listen({ onUnhandledRequest: 'bypass' });
  server = await startServer();
});
afterAll(async () => {
  msw.close();
  await server.close();
});

describe('email emitter -> real Express server with the mail receiver', () => {
  it('fails, retries at the documented offsets, pauses after 10, resumes, and retries once', async () => {
    const created = await mailApi('POST', '/webhooks', {
      url: `${server.url}/webhooks/mail`,
      events: ['delivered', 'bounced'],
      description: 'express',
    });
    expect(created.status).toBe(201);
    const { id, secret } = created.body;
    let healthy = false;
    const handled: { deliveryId: string; at: number }[] = [];
    const seen: { id: string; at: number }[] = [];
    const receiver = createMailReceiver({ secret }).onAny((event) => {
      if (!healthy) throw new Error('database down');
      handled.push({ deliveryId: event.deliveryId, at: clock.now() - START });
    });
    const app = express();
    app.use((req, _res, next) => {
      seen.push({ id: String(req.headers['x-svcmail-id']), at: clock.now() - START });
      next();
    });
    app.post('/webhooks/mail', createExpressMiddleware(receiver));
    server.use(app);

    const [first] = await mail.emit('bounced');
    await clock.runAll();
    expect(seen).toEqual([
      { id: first!.id, at: 0 },
      { id: first!.id, at: 60_000 },
      { id: first!.id, at: 120_000 },
    ]);
    const history = await mailApi('GET', `/webhooks/${id}/deliveries`);
    expect(
      history.body.data.map((a: { deliveryId: string; statusCode: number; success: boolean }) => [
        a.deliveryId,
        a.statusCode,
        a.success,
      ]),
    ).toEqual([
      [first!.id, 500, false],
      [first!.id, 500, false],
      [first!.id, 500, false],
    ]);
    expect(mail.getDelivery(first!.id).status).toBe('failed');

    for (let i = 0; i < 9; i++) await mail.emit('delivered');
    await clock.runAll();
    expect(seen).toHaveLength(30);
    expect((await mailApi('GET', `/webhooks/${id}`)).body).toMatchObject({
      status: 'paused',
      consecutiveFailures: 10,
    });
    expect(await mail.emit('delivered')).toEqual([]); // the eleventh is not sent
    await clock.runAll();
    expect(seen).toHaveLength(30);

    healthy = true;
    const reactivated = await mailApi('PATCH', `/webhooks/${id}`, { status: 'active' });
    expect(reactivated.body).toMatchObject({ status: 'active', consecutiveFailures: 0 });
    const [resumed] = await mail.emit('delivered');
    expect(resumed!.status).toBe('succeeded');
    expect(handled.map((h) => h.deliveryId)).toEqual([resumed!.id]);

    const retried = await mailApi('POST', `/webhooks/${id}/deliveries/${first!.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({
      deliveryId: first!.id,
      attempt: 4,
      kind: 'retry',
      statusCode: 200,
      success: true,
    });
    expect(handled.map((h) => h.deliveryId)).toEqual([resumed!.id, first!.id]);
    expect(seen.at(-1)!.id).toBe(first!.id);
    // Sent again by hand: the receiver answers 200 duplicate, the handler does not run twice.
    const again = await mailApi('POST', `/webhooks/${id}/deliveries/${first!.id}/retry`);
    expect(again.body.responseBody).toContain('duplicate');
    expect(handled).toHaveLength(2);

    const test = await mailApi('POST', `/webhooks/${id}/test`);
    expect(test.body).toMatchObject({ test: true, event: 'delivered', status: 'succeeded' });
  });
});

describe('CRM emitter -> real Express server with the CRM receiver', () => {
  it('rotation: a receiver knowing only the new secret refuses the old one; one with both keeps working', async () => {
    const created = await crmApi('POST', '/webhooks', {
      name: 'sales',
      url: `${server.url}/webhooks/crm-new`,
      events: ['deal.won'],
    });
    expect(created.status).toBe(201);
    const oldSecret: string = created.body.secret;
    const rotated = await crmApi('POST', `/webhooks/${created.body.id}/rotate-secret`);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).not.toBe(oldSecret);
    const handled: string[] = [];
    const app = express();
    const record = (event: { deliveryId: string }) => {
      handled.push(event.deliveryId);
    };
    app.post(
      '/webhooks/crm-new',
      createExpressMiddleware(createCrmReceiver({ secret: newSecret }).onAny(record)),
    );
    app.post(
      '/webhooks/crm-both',
      createExpressMiddleware(createCrmReceiver({ secret: [newSecret, oldSecret] }).onAny(record)),
    );
    server.use(app);

    const [delivery] = await crm.emit('deal.won');
    expect(delivery).toMatchObject({ status: 'succeeded' });
    expect(handled).toEqual([delivery!.id]);

    const post = async (path: string) => {
      const signed = await createSignedRequest({ service: 'crm', event: 'deal.won', secret: oldSecret });
      return fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: signed.headers,
        body: await signed.text(),
      });
    };
    expect((await post('/webhooks/crm-new')).status).toBe(401);
    expect((await post('/webhooks/crm-both')).status).toBe(200);

    await crmApi('PATCH', `/webhooks/${created.body.id}`, { url: `${server.url}/webhooks/crm-both` });
    expect((await crm.emit('deal.won'))[0]!.status).toBe('succeeded');
    const history = await crmApi('GET', `/webhooks/${created.body.id}/deliveries`);
    expect(
      history.body.data.map((d: { statusCode: number; attempts: number; success: boolean }) => [
        d.statusCode,
        d.attempts,
        d.success,
      ]),
    ).toEqual([
      [200, 1, true],
      [200, 1, true],
    ]);
  });

  it('a failing CRM receiver gets 3 attempts 1 s then 2 s apart over HTTP', async () => {
    const created = await crmApi('POST', '/webhooks', {
      name: 'down',
      url: `${server.url}/webhooks/crm-down`,
      events: ['deal.lost'],
    });
    const times: number[] = [];
    const app = express();
    app.post('/webhooks/crm-down', (_req, res) => {
      times.push(clock.now());
      res.status(503).end();
    });
    server.use(app);
    await crm.emit('deal.lost');
    await clock.runAll();
    expect(times.map((t) => t - times[0]!)).toEqual([0, 1_000, 3_000]);
    const [summary] = (await crmApi('GET', `/webhooks/${created.body.id}/deliveries`)).body.data;
    expect(summary).toMatchObject({ statusCode: 503, attempts: 3, success: false });
  });
});

describe('failed attempts over real HTTP', () => {
  async function attemptAgainst(listener: Parameters<typeof server.use>[0], attemptTimeoutMs?: number) {
    const local = createVirtualClock({ start: START });
    const emitter = createMailEmitter({
      clock: local,
      allowPrivateNetworks: true,
      ...(attemptTimeoutMs ? { attemptTimeoutMs } : {}),
    });
    server.use(listener);
    emitter.createWebhook({ url: `${server.url}/hook`, events: ['opened'] });
    const [delivery] = await emitter.emit('opened');
    return delivery!.attempts[0]!;
  }

  it('302: failed, the redirect is not followed', async () => {
    let followed = false;
    const attempt = await attemptAgainst((req, res) => {
      if (req.url === '/elsewhere') followed = true;
      res.writeHead(302, { Location: '/elsewhere' }).end();
    });
    expect(attempt).toMatchObject({ statusCode: 302, success: false, error: 'redirect 302 not followed' });
    expect(followed).toBe(false);
  });

  it('too slow: aborted at the time limit (short real limit), status 0', async () => {
    const attempt = await attemptAgainst((_req, res) => {
      setTimeout(() => res.end('late'), 1_500).unref();
    }, 200);
    expect(attempt).toMatchObject({ statusCode: 0, success: false });
    expect(attempt.error).toMatch(/timeout/);
  });

  it('connection reset: status 0 with the network error', async () => {
    const attempt = await attemptAgainst((req) => {
      req.socket.destroy();
    });
    expect(attempt).toMatchObject({ statusCode: 0, success: false });
    expect(attempt.error).toMatch(/fetch failed|ECONNRESET|socket/i);
  });
});
