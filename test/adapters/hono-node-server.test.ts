import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createAdaptorServer, getRequestListener } from '@hono/node-server';
import { createHonoMiddleware } from '@svc/webhooks/hono';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { listen, PATHS } from './support/servers.js';
import { waitingReceiver } from './support/slow-clients.js';

// On @hono/node-server the adapter reads a declared-length body through the server's own direct read
// of the Node request (src/adapters/hono/node-server-body.ts). These cases play what that read cannot
// do by itself: stop at the body deadline and refuse an oversized declaration, then free the
// connection, with and without the server's own clean-up of unread bodies.

const LIMIT = 64 * 1024;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function serve(app: Hono, autoCleanupIncoming: boolean): Promise<string> {
  const server = createAdaptorServer({ fetch: app.fetch, autoCleanupIncoming }) as Server;
  const started = await listen(server);
  close = started.close;
  return started.baseUrl;
}

/**
 * A raw client: the request head with `content-length: declared`, then `body` one byte per 50 ms
 * until the server answers. Never closes by itself; `closed()` tells whether the server cut it.
 */
async function rawClient(baseUrl: string, headers: Record<string, string>, declared: number, body = '') {
  const { hostname, port } = new URL(baseUrl);
  const socket: Socket = connect(Number(port), hostname);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let response = '';
  let sent = 0;
  let closed = false;
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    response += text;
  });
  socket.on('error', () => {});
  socket.once('close', () => {
    closed = true;
  });
  const head = Object.entries({ ...headers, host: 'localhost', 'content-length': String(declared) })
    .map(([name, value]) => `${name}: ${value}`)
    .join('\r\n');
  socket.write(`POST ${PATHS.mail} HTTP/1.1\r\n${head}\r\n\r\n`);
  const timer = setInterval(() => {
    if (response !== '' || closed || sent >= body.length) return clearInterval(timer);
    socket.write(body[sent++] ?? '');
  }, 50);
  return {
    response: () => response,
    sent: () => sent,
    closed: () => closed,
    destroy: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

for (const autoCleanupIncoming of [true, false]) {
  describe(`Hono on @hono/node-server (autoCleanupIncoming: ${autoCleanupIncoming})`, () => {
    it('answers a body trickled past bodyTimeoutMs 408 body_timeout, then cuts the connection', async () => {
      const { receiver, state } = waitingReceiver();
      const app = new Hono();
      app.post(PATHS.mail, createHonoMiddleware(receiver));
      const baseUrl = await serve(app, autoCleanupIncoming);
      const delivery = mailDelivery();
      const client = await rawClient(baseUrl, delivery.headers, delivery.body.length, delivery.body);
      try {
        await expect.poll(client.response, { timeout: 5_000 }).toMatch(/^HTTP\/1\.1 408 /);
        expect(client.response()).toContain('"code":"body_timeout"');
        // Freed by the server, long before the body (tens of seconds at 50 ms a byte) could arrive.
        await expect.poll(client.closed, { timeout: 10_000 }).toBe(true);
        expect(client.sent()).toBeLessThan(delivery.body.length);
        expect(state.started).toBe(0);
      } finally {
        client.destroy();
      }
    });

    it('answers a declared length over maxBodyBytes 413 without waiting for a byte, then cuts', async () => {
      const { mail, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
      const app = new Hono();
      app.post(PATHS.mail, createHonoMiddleware(mail));
      const baseUrl = await serve(app, autoCleanupIncoming);
      const delivery = mailDelivery();
      // 1 GiB declared, nothing sent: reading it whole would wait forever (and hold it all).
      const client = await rawClient(baseUrl, delivery.headers, 2 ** 30);
      try {
        await expect.poll(client.response, { timeout: 5_000 }).toMatch(/^HTTP\/1\.1 413 /);
        expect(client.response()).toContain('"code":"body_too_large"');
        await expect.poll(client.closed, { timeout: 10_000 }).toBe(true);
        expect(handled(delivery.deliveryId)).toBe(0);
      } finally {
        client.destroy();
      }
    });

    it('reads the exact bytes: a valid delivery 200, a changed byte 401', async () => {
      const { mail, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
      const app = new Hono();
      app.post(PATHS.mail, createHonoMiddleware(mail));
      const baseUrl = await serve(app, autoCleanupIncoming);
      const delivery = mailDelivery();
      const post = (body: string) =>
        fetch(`${baseUrl}${PATHS.mail}`, { method: 'POST', body, headers: delivery.headers });
      expect((await post(delivery.body.replace('gmail', 'gmaim'))).status).toBe(401);
      expect((await post(delivery.body)).status).toBe(200);
      expect(handled(delivery.deliveryId)).toBe(1);
    });
  });
}

describe('Hono on @hono/node-server: which read', () => {
  // A request nothing touched is read straight from the Node request: the server's request never
  // learns of it (its bodyUsed stays false). Fails if the server's own symbols are renamed and the
  // adapter falls back to the server's slower read.
  it('reads a fresh request from the Node request, and a request whose headers a middleware read too', async () => {
    const { mail, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const seen: boolean[] = [];
    const app = new Hono();
    app.post(PATHS.mail, async (c, next) => {
      if (c.req.header('x-read-headers') === 'yes') c.req.raw.headers.get('content-type');
      await next();
      seen.push(c.req.raw.bodyUsed);
    });
    app.post(PATHS.mail, createHonoMiddleware(mail));
    const baseUrl = await serve(app, true);
    for (const readHeaders of ['no', 'yes']) {
      const delivery = mailDelivery();
      const response = await fetch(`${baseUrl}${PATHS.mail}`, {
        method: 'POST',
        body: delivery.body,
        headers: { ...delivery.headers, 'x-read-headers': readHeaders },
      });
      expect(response.status).toBe(200);
      expect(handled(delivery.deliveryId)).toBe(1);
    }
    expect(seen).toEqual([false, false]);
  });
});

describe('Hono on @hono/node-server behind a host that read the body first', () => {
  // Cloud Functions-style hosts read the Node request themselves and keep the bytes as
  // `incoming.rawBody`; @hono/node-server's own read serves those, the drained stream has nothing.
  it('verifies the bytes the host kept in incoming.rawBody', async () => {
    const { mail, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new Hono();
    app.post(PATHS.mail, createHonoMiddleware(mail));
    const listener = getRequestListener(app.fetch);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        Object.assign(req, { rawBody: Buffer.concat(chunks) });
        void listener(req, res);
      });
    });
    const started = await listen(server);
    close = started.close;
    const delivery = mailDelivery();
    const response = await fetch(`${started.baseUrl}${PATHS.mail}`, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect(response.status).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
  });
});

describe('Hono on @hono/node-server when a middleware handled the request first', () => {
  it('a request a middleware put in place of c.req.raw is read as a web request', async () => {
    const { mail, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new Hono();
    app.post(PATHS.mail, async (c, next) => {
      c.req.raw = new Request(c.req.raw);
      await next();
    });
    app.post(PATHS.mail, createHonoMiddleware(mail));
    const baseUrl = await serve(app, true);
    const delivery = mailDelivery();
    const response = await fetch(`${baseUrl}${PATHS.mail}`, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect(response.status).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
  });

  it('a clone a middleware reads after the route still gets the bytes the receiver verified', async () => {
    const { mail, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const logged: string[] = [];
    const app = new Hono();
    app.post(PATHS.mail, async (c, next) => {
      const copy = c.req.raw.clone();
      await next();
      logged.push(await copy.text());
    });
    app.post(PATHS.mail, createHonoMiddleware(mail));
    const baseUrl = await serve(app, true);
    const delivery = mailDelivery();
    const response = await fetch(`${baseUrl}${PATHS.mail}`, {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect(response.status).toBe(200);
    expect(handled(delivery.deliveryId)).toBe(1);
    expect(logged).toEqual([delivery.body]);
  });
});
