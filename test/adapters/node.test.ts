import { createServer } from 'node:http';
import { connect } from 'node:net';
import { createMailReceiver } from '@svc/webhooks';
import { createNodeListener, handleNodeRequest, readNodeBody } from '@svc/webhooks/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/node-http/server.js';
import { type ConformanceTarget, conformance } from './conformance.js';
import { CRM_SECRET, MAIL_SECRET } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { listen, listenerTarget, PATHS } from './support/servers.js';
import { slowClientSuite, slowHeaders } from './support/slow-clients.js';

describe('node:http listener', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: 64 * 1024 });
    target = await listenerTarget(createNodeListener({ [PATHS.mail]: mail, [PATHS.crm]: crm }), handled);
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: 64 * 1024 });

  it('answers 404 not_found for a path with no receiver', async () => {
    const response = await fetch(`${target.baseUrl}/webhooks/other`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  slowClientSuite(async (receiver) => ({
    ...(await listen(createServer(createNodeListener({ [PATHS.mail]: receiver })))),
    path: PATHS.mail,
  }));
});

describe('handleNodeRequest with a receiver built elsewhere', () => {
  // Our receivers never reject; a hand-made WebhookReceiverLike might, and must still get an answer.
  const real = createMailReceiver({ secret: MAIL_SECRET, logger: () => {} });
  const cases = {
    rejects: { ...real, receive: () => Promise.reject(new Error('receive failed')) },
    throws: {
      ...real,
      receive: () => {
        throw new Error('receive threw');
      },
    },
  };
  for (const [name, receiver] of Object.entries(cases)) {
    it(`answers 500 internal_error when receive() ${name}, and the server stays up`, async () => {
      const server = createServer((req, res) => void handleNodeRequest(receiver, req, res));
      const { baseUrl, close } = await listen(server);
      for (let i = 0; i < 2; i++) {
        const response = await fetch(baseUrl, { method: 'POST', body: '{}' });
        expect(response.status).toBe(500);
        const text = await response.text();
        expect(JSON.parse(text)).toMatchObject({ error: { code: 'internal_error' } });
        expect(text).not.toContain('receive');
      }
      await close();
    });
  }
});

describe('examples/node-http', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const lines: string[] = [];
    const server = createApp({
      mailSecret: MAIL_SECRET,
      crmSecret: CRM_SECRET,
      print: (l) => lines.push(l),
      logger: () => {},
    });
    const handled = (id: string) =>
      lines.filter((l) => (JSON.parse(l) as { deliveryId: string }).deliveryId === id).length;
    const { baseUrl, close } = await listen(server);
    target = { baseUrl, paths: PATHS, handled, close };
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: 1_048_576 });

  it('cuts a client that trickles its headers (headersTimeout 5 s) with 408', async () => {
    // One byte per 100 ms, never done: only the server's headersTimeout ends it.
    expect(await slowHeaders(target.baseUrl, PATHS.mail)).toMatch(/^HTTP\/1\.1 408 /);
  });
});

describe('readNodeBody', () => {
  it('rejects with body_unreadable when the client disconnects mid-body', async () => {
    let settled: Promise<unknown> | undefined;
    let started = false;
    const server = createServer((req, res) => {
      started = true;
      settled = readNodeBody(req, 1024 * 1024).then(
        () => 'resolved',
        (error: { code?: string }) => error.code,
      );
      void settled.then(() => res.destroy());
    });
    const { baseUrl, close } = await listen(server);
    const { port } = new URL(baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"partial":');
    await expect.poll(() => started).toBe(true);
    socket.destroy();
    expect(await settled).toBe('body_unreadable');
    await close();
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    const server = createServer((req, res) => {
      readNodeBody(req, 10).then(
        () => res.end('read'),
        (error: { code: string }) => res.end(error.code),
      );
    });
    const { baseUrl, close } = await listen(server);
    const response = await fetch(baseUrl, { method: 'POST', body: 'x'.repeat(11) });
    expect(await response.text()).toBe('body_too_large');
    await close();
  });
});
