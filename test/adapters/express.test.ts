import { createServer, type IncomingMessage } from 'node:http';
import { createExpressMiddleware } from '@svc/webhooks/express';
import express5 from 'express';
import express4 from 'express4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, SERVER_TIMEOUTS } from '../../examples/express/server.js';
import { type ConformanceTarget, conformance } from './conformance.js';
import { CRM_SECRET, MAIL_SECRET, mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { listen, listenerTarget, PATHS } from './support/servers.js';
import { slowClientSuite, slowHeaders } from './support/slow-clients.js';

const LIMIT = 64 * 1024;
type Setup = 'nothing' | 'raw' | 'json-verify';

// Both majors share this much API; the test builds the same app with each.
const majors = { 'Express 5': express5, 'Express 4': express4 as unknown as typeof express5 };

function build(express: typeof express5, setup: Setup, receivers: ReturnType<typeof createTestReceivers>) {
  const app = express();
  if (setup === 'json-verify') {
    // The documented snippet: keep the exact bytes next to the parsed body.
    app.use(
      express.json({
        limit: LIMIT,
        verify: (req, _res, buf) => {
          (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
        },
      }),
    );
  }
  const raw = setup === 'raw' ? [express.raw({ type: '*/*', limit: LIMIT })] : [];
  app.post(PATHS.mail, ...raw, createExpressMiddleware(receivers.mail));
  app.post(PATHS.crm, ...raw, createExpressMiddleware(receivers.crm));
  return app;
}

for (const [major, express] of Object.entries(majors)) {
  for (const setup of ['nothing', 'raw', 'json-verify'] as const) {
    describe(`${major} with ${setup}`, () => {
      let target: ConformanceTarget;
      beforeAll(async () => {
        const receivers = createTestReceivers({ maxBodyBytes: LIMIT });
        target = await listenerTarget(build(express, setup, receivers), receivers.handled);
      });
      afterAll(() => target.close());
      conformance(() => target, {
        maxBodyBytes: LIMIT,
        parserInFront: setup === 'raw' ? 'raw' : setup === 'json-verify' ? 'json' : undefined,
      });
    });
  }

  describe(`${major} with express.json() before the route`, () => {
    let target: ConformanceTarget;
    let receivers: ReturnType<typeof createTestReceivers>;
    beforeAll(async () => {
      receivers = createTestReceivers({ maxBodyBytes: LIMIT });
      const app = express();
      app.use(express.json());
      app.post(PATHS.mail, createExpressMiddleware(receivers.mail));
      target = await listenerTarget(app, receivers.handled);
    });
    afterAll(() => target.close());

    it('answers 500 raw_body_unavailable, logs the fix once (not to the sender), runs no handler', async () => {
      const delivery = mailDelivery();
      const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('raw_body_unavailable');
      // The sender gets a short generic message; the fix is for whoever runs the app.
      expect(error.message).not.toContain('express');
      const logged = receivers.logs.filter((entry) => JSON.stringify(entry).includes('raw_body_unavailable'));
      expect(logged).toHaveLength(1);
      expect(String(logged[0]?.fields.err)).toContain('express.raw');
      expect(String(logged[0]?.fields.err)).toContain('verify');
      expect(target.handled(delivery.deliveryId)).toBe(0);
    });

    it('logs the fix once however many deliveries it refuses; the repeats only at debug', async () => {
      for (let i = 0; i < 3; i++) {
        const delivery = mailDelivery();
        const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
          method: 'POST',
          body: delivery.body,
          headers: delivery.headers,
        });
        expect(response.status).toBe(500);
        await response.arrayBuffer();
      }
      const refusals = receivers.logs.filter((entry) => entry.fields.code === 'raw_body_unavailable');
      expect(refusals.filter((entry) => entry.level === 'error')).toHaveLength(1);
      expect(refusals.filter((entry) => entry.level === 'debug').length).toBeGreaterThanOrEqual(3);
    });

    it('still reads the stream when express.json() skipped the request (other content type)', async () => {
      const delivery = mailDelivery();
      const response = await fetch(`${target.baseUrl}${PATHS.mail}`, {
        method: 'POST',
        body: delivery.body,
        headers: { ...delivery.headers, 'content-type': 'application/octet-stream' },
      });
      expect(response.status).toBe(200);
      expect(target.handled(delivery.deliveryId)).toBe(1);
    });
  });

  describe(major, () => {
    slowClientSuite(async (receiver) => {
      const app = express();
      app.post(PATHS.mail, createExpressMiddleware(receiver));
      app.use(express.json());
      return { ...(await listen(createServer(app))), path: PATHS.mail };
    });
  });
}

describe('examples/express', () => {
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
    // As the example serves it: a node:http server with its SERVER_TIMEOUTS.
    target = { ...(await listen(createServer(SERVER_TIMEOUTS, app))), paths: PATHS, handled };
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: 1_048_576 });

  it('cuts a client that trickles its headers (headersTimeout 5 s) with 408', async () => {
    expect(await slowHeaders(target.baseUrl, PATHS.mail)).toMatch(/^HTTP\/1\.1 408 /);
  });
});
