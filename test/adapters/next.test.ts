import { createServer } from 'node:http';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createNextPagesHandler, createNextRouteHandlers } from '@svc/webhooks/next';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ConformanceTarget, conformance } from './conformance.js';
import { CRM_SECRET, MAIL_SECRET, mailDelivery } from './support/deliveries.js';
import { buildNextApp, startNextApp } from './support/next-app.js';
import { fetchListener, listen } from './support/servers.js';
import { slowClientSuite } from './support/slow-clients.js';

// examples/next for real: `next build` (once; skipped while the build is newer than the sources),
// then `next start` on a free port, driven over HTTP like the services drive it.
describe('Next.js example (next build + next start)', () => {
  let app: Awaited<ReturnType<typeof startNextApp>>;
  beforeAll(async () => {
    const { built, ms } = buildNextApp();
    if (built) console.info(`next build took ${ms} ms`);
    app = await startNextApp({ SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET, SVC_CRM_WEBHOOK_SECRET: CRM_SECRET });
  }, 600_000);
  afterAll(() => app?.close());

  const target = (paths: ConformanceTarget['paths']): ConformanceTarget => ({
    baseUrl: app.baseUrl,
    paths,
    handled: (id) => app.handled(id),
    close: async () => {},
  });

  describe('App Router', () => {
    conformance(() => target({ mail: '/webhooks/mail', crm: '/webhooks/crm' }), {
      maxBodyBytes: 1_048_576,
      uploadAttempts: 3,
    });
  });

  describe('Pages Router', () => {
    conformance(() => target({ mail: '/api/webhooks/mail', crm: '/api/webhooks/crm' }), {
      maxBodyBytes: 1_048_576,
      uploadAttempts: 3,
    });

    it('detects a page with the body parser left on: 500 raw_body_unavailable, the fix in the log', async () => {
      const delivery = mailDelivery();
      const response = await fetch(`${app.baseUrl}/api/body-parser-on`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('raw_body_unavailable');
      // The sender gets a short generic message; the fix goes to the app's log (stderr here).
      expect(error.message).not.toContain('bodyParser');
      await expect.poll(() => app.stderr(), { timeout: 5_000 }).toContain('bodyParser: false');
      expect(app.handled(delivery.deliveryId)).toBe(0);
    });
  });

  it('`next start` with a placeholder secret and none: exits 1 at start-up naming both, no 500 per request', async () => {
    const failed = startNextApp({ SVC_MAIL_WEBHOOK_SECRET: '...', SVC_CRM_WEBHOOK_SECRET: '' });
    const error = await failed.then(
      () => new Error('next start answered requests'),
      (e: Error) => e,
    );
    expect(error.message).toContain('next start exited');
    expect(error.message).toContain('SVC_MAIL_WEBHOOK_SECRET is shorter than 16 characters');
    expect(error.message).toContain(
      'SVC_CRM_WEBHOOK_SECRET is not set: export it (at least 16 characters, e.g. $(openssl rand -hex 24))',
    );
    expect(error.message).not.toContain('    at ');
  });

  it('printed only JSON event lines with service, event and deliveryId on stdout', () => {
    const json = app.lines.filter((line) => line.startsWith('{'));
    expect(json.length).toBeGreaterThan(0);
    for (const line of json) {
      expect(Object.keys(JSON.parse(line) as object).sort()).toEqual(['deliveryId', 'event', 'service']);
    }
  });
});

// The Pages Router handler is a Node request handler: `next start` passes it Node's req/res as they
// are, so a plain node:http server exercises the same code without a build.
describe('createNextPagesHandler on node:http', () => {
  slowClientSuite(async (receiver) => {
    const handler = createNextPagesHandler(() => receiver);
    return {
      ...(await listen(createServer((req, res) => void handler(req, res)))),
      path: '/api/webhooks/mail',
    };
  });
});

// A lazy route whose receiver cannot be created: `next start` calls the exported POST with the
// request (App Router) or the Pages handler with Node's req/res, as the servers here do.
describe('a lazy route whose receiver cannot be created', () => {
  const servers: Array<() => Promise<void>> = [];
  let errors: { mock: { calls: unknown[][] }; mockRestore(): void };
  beforeEach(() => {
    errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(async () => {
    errors.mockRestore();
    for (const close of servers.splice(0)) await close();
  });

  async function postThrice(baseUrl: string, delivery = mailDelivery()) {
    const answers: Array<{ status: number; error: { code: string; message: string } }> = [];
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${baseUrl}/webhooks/mail`, {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      const text = await response.text();
      expect(text).not.toBe('');
      answers.push({
        status: response.status,
        ...(JSON.parse(text) as { error: { code: string; message: string } }),
      });
    }
    return answers;
  }

  const logged = () => errors.mock.calls.map((call: unknown[]) => call.map(String).join(' '));

  it('App Router, secret not set: 500 secret_invalid naming SVC_MAIL_WEBHOOK_SECRET on every request, logged once without a stack', async () => {
    const { POST } = createNextRouteHandlers(() =>
      createMailReceiver({ secret: process.env.SVC_NEXT_TEST_UNSET_SECRET! }),
    );
    const { baseUrl, close } = await listen(createServer(fetchListener(POST)));
    servers.push(close);
    for (const answer of await postThrice(baseUrl)) {
      expect(answer.status).toBe(500);
      expect(answer.error.code).toBe('secret_invalid');
      expect(answer.error.message).toContain('SVC_MAIL_WEBHOOK_SECRET');
    }
    expect(logged()).toHaveLength(1);
    expect(logged()[0]).toContain('SVC_MAIL_WEBHOOK_SECRET');
    expect(logged()[0]).not.toContain('    at ');
  });

  it('Pages Router, CRM secret too short: 500 secret_invalid naming SVC_CRM_WEBHOOK_SECRET, logged once', async () => {
    const handler = createNextPagesHandler(() => createCrmReceiver({ secret: 'short' }));
    const { baseUrl, close } = await listen(createServer((req, res) => void handler(req, res)));
    servers.push(close);
    for (const answer of await postThrice(baseUrl)) {
      expect([answer.status, answer.error.code]).toEqual([500, 'secret_invalid']);
      expect(answer.error.message).toContain('SVC_CRM_WEBHOOK_SECRET');
    }
    expect(logged()).toHaveLength(1);
    expect(logged()[0]).toContain('SVC_CRM_WEBHOOK_SECRET');
  });

  it("a factory's own error: 500 options_invalid with a generic answer; its message logged once", async () => {
    const { POST } = createNextRouteHandlers(() => {
      throw new Error('postgres://app:hunter2-not-for-senders@db/app is unreachable');
    });
    const { baseUrl, close } = await listen(createServer(fetchListener(POST)));
    servers.push(close);
    for (const answer of await postThrice(baseUrl)) {
      expect([answer.status, answer.error.code]).toEqual([500, 'options_invalid']);
      expect(answer.error.message).not.toContain('hunter2');
    }
    expect(logged()).toHaveLength(1);
    expect(logged()[0]).toContain('is unreachable');
  });
});
