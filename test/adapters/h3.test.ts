import type { WebhookReceiverLike } from '@svc/webhooks';
import { H3, readBody, serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { mailDelivery } from './support/deliveries.js';
import { createTestReceivers } from './support/receivers.js';
import { PATHS } from './support/servers.js';
import { slowClientSuite } from './support/slow-clients.js';

const LIMIT = 64 * 1024;

/** The docs/adapters-fetch.md recipe: h3 v2's event.req is a web Request, so `receiver.handle` serves. */
function mount(app: H3, path: string, receiver: WebhookReceiverLike): void {
  app.post(path, (event) => receiver.handle(event.req));
}

/** h3 2 for real: `serve()` (srvx on Node) on 127.0.0.1, port 0. */
async function serveH3(app: H3) {
  const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true });
  await server.ready();
  return { baseUrl: server.url!.replace(/\/$/, ''), close: () => server.close(true) };
}

describe('h3 2 (srvx on Node), the fetch recipe', () => {
  let target: ConformanceTarget;
  beforeAll(async () => {
    const { mail, crm, handled } = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new H3();
    mount(app, PATHS.mail, mail);
    mount(app, PATHS.crm, crm);
    target = { ...(await serveH3(app)), paths: PATHS, handled };
  });
  afterAll(() => target.close());
  conformance(() => target, { maxBodyBytes: LIMIT, oversizeOnOwnConnection: true });

  slowClientSuite(
    async (receiver) => {
      const app = new H3();
      mount(app, PATHS.mail, receiver);
      return { ...(await serveH3(app)), path: PATHS.mail };
    },
    // srvx aborts the request's signal without a reason of its own: the platform's AbortError.
    { abortReason: (reason) => expect((reason as Error).name).toBe('AbortError') },
  );
});

describe('h3 2 with a middleware that read the body first (readBody)', () => {
  it('answers 500 raw_body_unavailable with the fix in the log, runs no handler', async () => {
    const receivers = createTestReceivers({ maxBodyBytes: LIMIT });
    const app = new H3();
    app.use(async (event) => {
      await readBody(event);
    });
    mount(app, PATHS.mail, receivers.mail);
    const { baseUrl, close } = await serveH3(app);
    try {
      const delivery = mailDelivery();
      const response = await fetch(`${baseUrl}${PATHS.mail}`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      expect(response.status).toBe(500);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'raw_body_unavailable',
      );
      const logged = receivers.logs.filter((entry) => JSON.stringify(entry).includes('raw_body_unavailable'));
      expect(logged).toHaveLength(1);
      expect(String(logged[0]?.fields.err)).toContain('before anything reads its body');
      expect(receivers.handled(delivery.deliveryId)).toBe(0);
    } finally {
      await close();
    }
  });
});
