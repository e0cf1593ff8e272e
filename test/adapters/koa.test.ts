import type { IncomingMessage } from 'node:http';
import { createKoaMiddleware } from '@svc/webhooks/koa';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { listenerTarget, PATHS } from './support/servers.js';
import { slowClientSuite } from './support/slow-clients.js';

const LIMIT = 64 * 1024;

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/**
 * A body parser as koa-bodyparser and @koa/bodyparser behave (neither is installed here): for a JSON
 * request it consumes `ctx.req`, sets `ctx.request.body` to the parsed object and
 * `ctx.request.rawBody` to the body decoded as UTF-8 text.
 */
const jsonBodyParser: Koa.Middleware = async (ctx, next) => {
  if (ctx.is('application/json')) {
    const text = (await readAll(ctx.req)).toString('utf8');
    const request = ctx.request as typeof ctx.request & { body?: unknown; rawBody?: string };
    request.rawBody = text;
    request.body = JSON.parse(text);
  }
  await next();
};

/** A raw parser (as koa-body / raw-body setups do): the exact bytes as a Buffer in ctx.request.body. */
const rawBodyParser: Koa.Middleware = async (ctx, next) => {
  (ctx.request as typeof ctx.request & { body?: unknown }).body = await readAll(ctx.req);
  await next();
};

describe('Koa 3, webhook middleware first, a JSON body parser after it', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new Koa();
    app.use(createKoaMiddleware({ [PATHS.mail]: mail, [PATHS.crm]: crm }));
    app.use(jsonBodyParser);
    app.use((ctx) => {
      ctx.body = { parsed: (ctx.request as { body?: unknown }).body };
    });
    target = await listenerTarget(app.callback(), handled);
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: LIMIT });

  it('passes other paths on to the rest of the app, body parser included', async () => {
    const response = await fetch(`${target.baseUrl}/api/echo`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toEqual({ parsed: { a: 1 } });
  });

  slowClientSuite(async (receiver) => {
    const app = new Koa();
    app.use(createKoaMiddleware({ [PATHS.mail]: receiver }));
    const { baseUrl, close } = await listenerTarget(app.callback(), () => 0);
    return { baseUrl, path: PATHS.mail, close };
  });
});

describe('Koa with a body parser before the webhook middleware', () => {
  let target: ConformanceTarget;
  let receivers: ReturnType<typeof createTestReceivers>;
  beforeAll(async () => {
    receivers = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new Koa();
    app.use(async (ctx, next) => (ctx.path.startsWith('/raw/') ? rawBodyParser(ctx, next) : next()));
    app.use(async (ctx, next) => (ctx.path.startsWith('/json/') ? jsonBodyParser(ctx, next) : next()));
    // One receiver per middleware, mounted under a path as a router would.
    const mail = createKoaMiddleware(receivers.mail);
    app.use(async (ctx, next) => (ctx.path.endsWith('/mail') ? mail(ctx, next) : next()));
    target = await listenerTarget(app.callback(), receivers.handled);
  });
  afterAll(() => target.close());

  const post = (path: string, delivery = mailDelivery(), headers = delivery.headers) =>
    fetch(`${target.baseUrl}${path}`, { method: 'POST', body: delivery.body, headers });

  it('a parser that consumed the stream (rawBody is text): 500 raw_body_unavailable, the fix logged once, no handler', async () => {
    const delivery = mailDelivery();
    const response = await post('/json/mail', delivery);
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('raw_body_unavailable');
    expect(error.message).not.toContain('bodyParser');
    const logged = receivers.logs.filter((entry) => JSON.stringify(entry).includes('raw_body_unavailable'));
    expect(logged).toHaveLength(1);
    expect(String(logged[0]?.fields.err)).toContain('app.use(createKoaMiddleware(routes)) first');
    expect(receivers.handled(delivery.deliveryId)).toBe(0);
  });

  it('the parser skipped the request (other content type): the stream is read', async () => {
    const delivery = mailDelivery();
    const response = await post('/json/mail', delivery, {
      ...delivery.headers,
      'content-type': 'application/octet-stream',
    });
    expect(response.status).toBe(200);
    expect(receivers.handled(delivery.deliveryId)).toBe(1);
  });

  it('a raw parser left a Buffer in ctx.request.body: those bytes are verified and used', async () => {
    const delivery = mailDelivery();
    expect((await post('/raw/mail', delivery)).status).toBe(200);
    expect(receivers.handled(delivery.deliveryId)).toBe(1);
    const forged = await post('/raw/mail', mailDelivery(), {
      ...delivery.headers,
      'x-svcmail-sig': `sha256=${'0'.repeat(64)}`,
    });
    expect(forged.status).toBe(401);
  });

  it('one receiver answers every request that reaches it, a wrong method 405', async () => {
    const response = await fetch(`${target.baseUrl}/anywhere/mail`, { method: 'GET' });
    expect(response.status).toBe(405);
  });
});
