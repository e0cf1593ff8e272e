import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { createMailReceiver, type WebhookReceiverLike } from '@svc/webhooks';
import { createHonoMiddleware } from '@svc/webhooks/hono';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { validator } from 'hono/validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { MAIL_SECRET, mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { listen, PATHS } from './support/servers.js';
import { slowClientSuite } from './support/slow-clients.js';

const LIMIT = 64 * 1024;

/** Hono on Node for real: @hono/node-server's server on 127.0.0.1, port 0. */
async function serveHono(app: Hono) {
  return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
}

describe('Hono on @hono/node-server', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new Hono();
    app.post(PATHS.mail, createHonoMiddleware(mail));
    app.post(PATHS.crm, createHonoMiddleware(crm));
    target = { ...(await serveHono(app)), paths: PATHS, handled };
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: LIMIT });

  slowClientSuite(
    async (receiver) => {
      const app = new Hono();
      app.post(PATHS.mail, createHonoMiddleware(receiver));
      return { ...(await serveHono(app)), path: PATHS.mail };
    },
    // The handlers' signal is the request's: @hono/node-server aborts it with its own reason.
    { abortReason: (reason) => expect(reason).toBe('Client connection prematurely closed.') },
  );
});

/** Middleware that reads the body before the route, as apps do (logging, validation, auth). */
const readers: Record<string, MiddlewareHandler> = {
  'c.req.json()': async (c, next) => {
    await c.req.json();
    await next();
  },
  'c.req.text()': async (c, next) => {
    await c.req.text();
    await next();
  },
  "validator('json')": validator('json', (value) => value),
  'c.req.raw.text() (no Hono cache)': async (c, next) => {
    await c.req.raw.text();
    await next();
  },
  'a reader holding c.req.raw.body (locked, nothing read)': async (c, next) => {
    c.req.raw.body?.getReader();
    await next();
  },
};

describe('Hono with a middleware that read the body first', () => {
  let baseUrl: string;
  let close: () => Promise<void>;
  let receivers: ReturnType<typeof createTestReceivers>;
  beforeAll(async () => {
    receivers = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new Hono();
    for (const [i, reader] of Object.values(readers).entries()) {
      app.post(`/read/${i}/*`, reader);
      app.post(`/read/${i}/mail`, createHonoMiddleware(receivers.mail));
      // The fetch-handler recipe on the same app: `receiver.handle(c.req.raw)`.
      app.post(`/read/${i}/handle`, (c) => receivers.mail.handle(c.req.raw));
    }
    app.post('/bytes/*', async (c, next) => {
      await c.req.arrayBuffer();
      await next();
    });
    app.post('/blob/*', async (c, next) => {
      await c.req.blob();
      await next();
    });
    app.post('/bytes-then-json/*', async (c, next) => {
      await c.req.arrayBuffer();
      await c.req.json();
      await next();
    });
    // parseBody() reads forms only: a JSON delivery's body is left unread.
    app.post('/parse-body/*', async (c, next) => {
      await c.req.parseBody();
      await next();
    });
    for (const prefix of ['/bytes', '/blob', '/bytes-then-json', '/parse-body'])
      app.post(`${prefix}/mail`, createHonoMiddleware(receivers.mail));
    ({ baseUrl, close } = await serveHono(app));
  });
  afterAll(() => close());

  const post = (path: string, delivery = mailDelivery(), body: string | Uint8Array = delivery.body) =>
    fetch(`${baseUrl}${path}`, { method: 'POST', body, headers: delivery.headers });
  const logged = () =>
    receivers.logs.filter((entry) => JSON.stringify(entry).includes('raw_body_unavailable'));

  for (const [i, name] of Object.keys(readers).entries()) {
    it(`${name}: 500 raw_body_unavailable (not "ReadableStream is locked"), the fix logged once, no handler`, async () => {
      for (const route of ['mail', 'handle']) {
        const before = logged().length;
        const delivery = mailDelivery();
        const response = await post(`/read/${i}/${route}`, delivery);
        expect(response.status).toBe(500);
        const { error } = (await response.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe('raw_body_unavailable');
        // The sender gets a short generic message; the fix is for whoever runs the app.
        expect(error.message).not.toContain('c.req');
        expect(logged()).toHaveLength(before + 1);
        const fix = String(logged().at(-1)?.fields.err);
        expect(fix).toContain(
          route === 'mail' ? 'await c.req.arrayBuffer()' : 'before anything reads its body',
        );
        expect(fix).not.toContain('locked');
        expect(receivers.handled(delivery.deliveryId)).toBe(0);
      }
    });
  }

  it('uses the exact bytes Hono kept from c.req.arrayBuffer() or c.req.blob()', async () => {
    for (const prefix of ['/bytes', '/blob', '/bytes-then-json', '/parse-body']) {
      const delivery = mailDelivery();
      const response = await post(`${prefix}/mail`, delivery);
      expect(response.status).toBe(200);
      expect(receivers.handled(delivery.deliveryId)).toBe(1);
    }
  });

  it('kept bytes are still checked: a forged signature 401, a body over maxBodyBytes 413', async () => {
    const delivery = mailDelivery();
    const forged = await post('/bytes/mail', {
      ...delivery,
      headers: { ...delivery.headers, 'x-svcmail-sig': `sha256=${'0'.repeat(64)}` },
    });
    expect(forged.status).toBe(401);
    const large = await post('/bytes/mail', delivery, new Uint8Array(LIMIT + 1).fill(0x20));
    expect(large.status).toBe(413);
    expect(receivers.handled(delivery.deliveryId)).toBe(0);
  });

  it('a body kept only as text is not re-encoded, even when re-encoding would verify', async () => {
    // ASCII JSON: text() and back gives the same bytes, yet the adapter cannot prove that in general.
    const response = await post('/read/1/mail');
    expect(response.status).toBe(500);
  });
});

describe('createHonoMiddleware(factory)', () => {
  type Env = { Bindings: { SVC_MAIL_WEBHOOK_SECRET: string } };

  it('creates the receiver from the context (Workers bindings in c.env) on the first request only', async () => {
    const created: WebhookReceiverLike[] = [];
    const app = new Hono<Env>();
    app.post(
      '/webhooks/mail',
      createHonoMiddleware((c: Context<Env>) => {
        const receiver = createMailReceiver({ secret: c.env.SVC_MAIL_WEBHOOK_SECRET, logger: () => {} });
        created.push(receiver);
        return receiver;
      }),
    );
    const env = { SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET };
    for (let i = 0; i < 2; i++) {
      const delivery = mailDelivery();
      const init = { method: 'POST', body: delivery.body, headers: delivery.headers };
      expect((await app.request('/webhooks/mail', init, env)).status).toBe(200);
    }
    expect(created).toHaveLength(1);
  });

  it('answers a wrong method 405 as the receiver does, mounted with app.use()', async () => {
    const { mail } = createTestReceivers();
    const app = new Hono();
    app.use('/webhooks/mail', createHonoMiddleware(mail));
    const response = await app.request('/webhooks/mail', { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});
