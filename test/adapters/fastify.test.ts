import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { createMailReceiver } from '@svc/webhooks';
import { createFastifyPlugin } from '@svc/webhooks/fastify';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/fastify/server.js';
import { type ConformanceTarget, conformance } from './conformance.js';
import { CRM_SECRET, MAIL_SECRET, mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { PATHS } from './support/servers.js';
import { slowClientSuite, slowHeaders, slowLoris } from './support/slow-clients.js';

async function fastifyTarget(
  app: FastifyInstance,
  handled: (id: string) => number,
): Promise<ConformanceTarget> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { baseUrl: address, paths: PATHS, handled, close: () => app.close() };
}

describe('Fastify 5 plugin', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: 64 * 1024 });
    const app = Fastify();
    await app.register(createFastifyPlugin(mail, { path: PATHS.mail }));
    await app.register(createFastifyPlugin(crm, { path: PATHS.crm }));
    app.post('/api/echo', async (request) => ({ parsed: request.body }));
    target = await fastifyTarget(app, handled);
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: 64 * 1024 });

  it('leaves the rest of the app with its JSON parser', async () => {
    const response = await fetch(`${target.baseUrl}/api/echo`, {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(await response.json()).toEqual({ parsed: { a: 1 } });
  });

  slowClientSuite(async (receiver) => {
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver, { path: PATHS.mail }));
    const { baseUrl, close } = await fastifyTarget(app, () => 0);
    return { baseUrl, path: PATHS.mail, close };
  });
});

describe('Fastify plugin bodyLimit', () => {
  it('answers 413 body_too_large past the bodyLimit option', async () => {
    const { mail, handled } = createTestReceivers();
    const app = Fastify();
    await app.register(createFastifyPlugin(mail, { path: PATHS.mail, bodyLimit: 100 }));
    const target = await fastifyTarget(app, handled);
    const delivery = mailDelivery();
    const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: {
        code: 'body_too_large',
        message: "The body exceeds this receiver's limit of 100 bytes (option maxBodyBytes).",
        doc_url: 'https://svc.github.io/webhooks/errors.html#body_too_large',
      },
    });
    await target.close();
  });
});

describe('Fastify plugin bodyTimeoutMs', () => {
  it("overrides the receiver's body deadline: 408 body_timeout for a slow body", async () => {
    // The receiver's own deadline is a minute: only the plugin's 200 ms can answer this body.
    const receiver = createMailReceiver({ secret: MAIL_SECRET, logger: () => {}, bodyTimeoutMs: 60_000 });
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver, { path: PATHS.mail, bodyTimeoutMs: 200 }));
    const target = await fastifyTarget(app, () => 0);
    try {
      const delivery = mailDelivery();
      const { response, sent } = await slowLoris(target.baseUrl, PATHS.mail, delivery.headers, delivery.body);
      expect(response).toMatch(/^HTTP\/1\.1 408 /);
      expect(response).toContain('"code":"body_timeout"');
      expect(sent).toBeLessThan(delivery.body.length);
    } finally {
      await target.close();
    }
  });
});

describe('examples/fastify', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const lines: string[] = [];
    const app = createApp({
      mailSecret: MAIL_SECRET,
      crmSecret: CRM_SECRET,
      print: (l) => lines.push(l),
      logger: () => {},
    });
    const handled = (id: string) =>
      lines.filter((l) => (JSON.parse(l) as { deliveryId: string }).deliveryId === id).length;
    target = await fastifyTarget(app, handled);
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: 1_048_576 });

  it('cuts a client that trickles its headers (headersTimeout 5 s) with 408', async () => {
    // One byte per 100 ms, never done: only the server's headersTimeout ends it.
    expect(await slowHeaders(target.baseUrl, PATHS.mail)).toMatch(/^HTTP\/1\.1 408 /);
  });
});

describe('createFastifyPlugin', () => {
  it('serves the receiver under a register prefix, with route options given at creation or registration', async () => {
    const { mail, crm, handled } = createTestReceivers();
    const app = Fastify();
    await app.register(createFastifyPlugin(mail), { prefix: PATHS.mail });
    await app.register(createFastifyPlugin(crm, { path: '/ignored', bodyLimit: 100 }), {
      path: PATHS.crm,
    });
    const target = await fastifyTarget(app, handled);
    try {
      const delivery = mailDelivery();
      const ok = await fetch(`${target.baseUrl}${PATHS.mail}`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      expect(ok.status).toBe(200);
      expect(handled(delivery.deliveryId)).toBe(1);
      // The creation-time bodyLimit applies; the registration-time path replaced the creation-time one.
      const large = await fetch(`${target.baseUrl}${PATHS.crm}`, { method: 'POST', body: 'x'.repeat(101) });
      expect(large.status).toBe(413);
      expect((await fetch(`${target.baseUrl}/ignored`, { method: 'POST', body: '{}' })).status).toBe(404);
    } finally {
      await target.close();
    }
  });
});

describe("Fastify plugin: Fastify's own body reading", () => {
  it('a client that goes away mid-body: no handler, no crash, the next delivery handled', async () => {
    const { mail, handled, logs } = createTestReceivers();
    const app = Fastify();
    await app.register(createFastifyPlugin(mail, { path: PATHS.mail }));
    const target = await fastifyTarget(app, handled);
    try {
      const gone = mailDelivery();
      const { hostname, port } = new URL(target.baseUrl);
      const socket = connect(Number(port), hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      const head = Object.entries({ ...gone.headers, host: 'localhost', 'content-length': '100000' })
        .map(([name, value]) => `${name}: ${value}`)
        .join('\r\n');
      socket.write(`POST ${PATHS.mail} HTTP/1.1\r\n${head}\r\n\r\n${gone.body}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      // The receiver saw a body it could not read (400 body_unreadable, logged), not a server error.
      await expect
        .poll(() => logs.some((entry) => JSON.stringify(entry).includes('body_unreadable')), {
          timeout: 5_000,
        })
        .toBe(true);
      expect(logs.some((entry) => JSON.stringify(entry).includes('internal_error'))).toBe(false);
      const next = mailDelivery();
      const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
        method: 'POST',
        body: next.body,
        headers: next.headers,
      });
      expect(response.status).toBe(200);
      expect(handled(next.deliveryId)).toBe(1);
      expect(handled(gone.deliveryId)).toBe(0);
    } finally {
      await target.close();
    }
  });

  it("keeps the receiver's bytes exact whatever the Content-Type (a BOM and bytes that are not UTF-8)", async () => {
    const { mail, handled } = createTestReceivers();
    const app = Fastify();
    await app.register(createFastifyPlugin(mail, { path: PATHS.mail }));
    const target = await fastifyTarget(app, handled);
    try {
      const delivery = mailDelivery();
      // Signed over these exact bytes by node:crypto: a BOM, then the JSON with a byte that is not UTF-8.
      const bytes = Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(delivery.body.replace('"gmail"', '"gm\u0000ail"')),
      ]);
      bytes[bytes.indexOf(0)] = 0xff;
      const signature = `sha256=${createHmac('sha256', MAIL_SECRET).update(bytes).digest('hex')}`;
      for (const type of ['application/json', 'text/plain; charset=utf-8', 'application/octet-stream']) {
        const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
          method: 'POST',
          body: bytes,
          headers: { ...delivery.headers, 'content-type': type, 'x-svcmail-sig': signature },
        });
        // Verified over the exact bytes (not 401), then refused as a body that is not JSON.
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: { code: string } }).error.code).not.toBe(
          'signature_mismatch',
        );
      }
    } finally {
      await target.close();
    }
  });
});

describe('Fastify plugin with a receiver built elsewhere that fails', () => {
  // The route returns nothing and sends from receive()'s settlement: a rejection and a synchronous
  // throw must each still get an answer, 500 internal_error, never a hung request.
  for (const failure of ['rejects', 'throws'] as const) {
    it(`answers 500 internal_error when receive() ${failure}`, async () => {
      const real = createMailReceiver({ secret: MAIL_SECRET });
      const failing = {
        service: real.service,
        handle: (request: Request) => real.handle(request),
        receive: () => {
          if (failure === 'throws') throw new Error('receive threw');
          return Promise.reject(new Error('receive rejected'));
        },
      } as unknown as Parameters<typeof createFastifyPlugin>[0];
      const app = Fastify();
      await app.register(createFastifyPlugin(failing, { path: PATHS.mail }));
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      try {
        const delivery = mailDelivery();
        const response = await fetch(`${address}${PATHS.mail}`, {
          method: 'POST',
          body: delivery.body,
          headers: delivery.headers,
        });
        expect(response.status).toBe(500);
        expect(await response.json()).toMatchObject({ error: { code: 'internal_error' } });
      } finally {
        await app.close();
      }
    });
  }
});
