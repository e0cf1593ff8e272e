/**
 * A secret per tenant: `secret` as a function of the route (`/webhooks/crm/:tenant`), on Express (real
 * server, `req.params`) and on fetch (`receiver.handle` behind a real node:http server, the path).
 * Signatures by node:crypto (support/deliveries.ts).
 */
import { createServer } from 'node:http';
import { createCrmReceiver, type LogEntry, type SecretResolver } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { crmDelivery } from '../adapters/support/deliveries.js';
import { fetchListener, listen } from '../adapters/support/servers.js';

const ACME = 'whsec_acme_tenant_secret_0123456789abcdef';
const ACME_NEXT = 'whsec_acme_rotated_secret_fedcba9876543210';
const GLOBEX = 'whsec_globex_tenant_secret_0123456789abcdef';

type Setup = {
  secret: SecretResolver;
  secretTimeoutMs?: number;
  secretCache?: { ttlMs?: number; maxEntries?: number };
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The CRM receiver of one app, counting handler runs and keeping log entries. */
function receiverOf(setup: Setup) {
  const handled: string[] = [];
  const logs: LogEntry[] = [];
  const crm = createCrmReceiver({ ...setup, logger: (entry) => logs.push(entry) }).onAny(
    (_event, context) => {
      handled.push(context.deliveryId);
    },
  );
  return { crm, handled, logs };
}

const servers = {
  async express(setup: Setup) {
    const app = receiverOf(setup);
    const server = express();
    server.post('/webhooks/crm/:tenant', createExpressMiddleware(app.crm));
    const { baseUrl, close } = await listen(createServer(server));
    closers.push(close);
    return { ...app, baseUrl };
  },
  async fetch(setup: Setup) {
    const app = receiverOf(setup);
    const { baseUrl, close } = await listen(
      createServer(fetchListener((request) => app.crm.handle(request))),
    );
    closers.push(close);
    return { ...app, baseUrl };
  },
};

async function post(baseUrl: string, tenant: string, secret: string) {
  const delivery = crmDelivery({ secret });
  const response = await fetch(`${baseUrl}/webhooks/crm/${tenant}`, {
    method: 'POST',
    body: delivery.body,
    headers: delivery.headers,
  });
  const answer = (await response.json()) as { error?: { code: string; message: string } };
  return { status: response.status, code: answer.error?.code, deliveryId: delivery.deliveryId };
}

const tenantOf = (path: string) => /^\/webhooks\/crm\/([^/]+)$/.exec(path)?.[1];

for (const [name, start] of Object.entries(servers)) {
  // Express gives the route's parameters; on fetch the function reads the path.
  const resolverFor =
    (secrets: Map<string, string | string[]>, calls: string[] = []): SecretResolver =>
    async ({ params, path }) => {
      const tenant = name === 'express' ? params.tenant : tenantOf(path);
      calls.push(tenant ?? '');
      return tenant === undefined ? undefined : secrets.get(tenant);
    };

  describe(`a secret per tenant on ${name}: /webhooks/crm/:tenant`, () => {
    it("verifies each tenant's delivery with its own secret; an unknown tenant or another tenant's secret: 401, no handler", async () => {
      const tenants = new Map([
        ['acme', ACME],
        ['globex', GLOBEX],
      ]);
      const app = await start({ secret: resolverFor(tenants) });
      const acme = await post(app.baseUrl, 'acme', ACME);
      expect(acme.status).toBe(200);
      expect(await post(app.baseUrl, 'globex', GLOBEX)).toMatchObject({ status: 200 });
      const unknown = await post(app.baseUrl, 'initech', ACME);
      expect(unknown).toMatchObject({ status: 401, code: 'signature_mismatch' });
      const crossed = await post(app.baseUrl, 'globex', ACME);
      expect(crossed).toMatchObject({ status: 401, code: 'signature_mismatch' });
      expect(app.handled).toHaveLength(2);
      expect(app.handled).not.toContain(unknown.deliveryId);
      expect(app.handled).not.toContain(crossed.deliveryId);
    });

    it('a rotation takes effect at once although answers are cached: the new secret verifies, the old one no longer', async () => {
      const tenants = new Map<string, string | string[]>([['acme', ACME]]);
      const calls: string[] = [];
      const app = await start({ secret: resolverFor(tenants, calls) });
      expect((await post(app.baseUrl, 'acme', ACME)).status).toBe(200);
      expect((await post(app.baseUrl, 'acme', ACME)).status).toBe(200);
      expect(calls).toEqual(['acme']); // cached
      // crm-service §3: rotate-secret; the old secret stops working immediately.
      tenants.set('acme', ACME_NEXT);
      await new Promise((resolve) => setTimeout(resolve, 1_050)); // a cached answer is re-asked at most once a second
      expect((await post(app.baseUrl, 'acme', ACME_NEXT)).status).toBe(200);
      expect(calls).toEqual(['acme', 'acme']);
      expect(await post(app.baseUrl, 'acme', ACME)).toMatchObject({
        status: 401,
        code: 'signature_mismatch',
      });
      // A rotation list (the email service's overlap, or a tenant's own): either verifies.
      tenants.set('acme', [ACME_NEXT, ACME]);
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      expect((await post(app.baseUrl, 'acme', ACME)).status).toBe(200);
      expect((await post(app.baseUrl, 'acme', ACME_NEXT)).status).toBe(200);
      expect(app.handled).toHaveLength(5);
    });

    it('a function that throws: 503 secret_unavailable, no handler, the cause in the log only', async () => {
      const app = await start({
        secret: () => {
          throw new Error('secrets table unreachable');
        },
      });
      const answer = await post(app.baseUrl, 'acme', ACME);
      expect(answer).toMatchObject({ status: 503, code: 'secret_unavailable' });
      expect(app.handled).toEqual([]);
      const entry = app.logs.find((log) => log.fields.code === 'secret_unavailable');
      expect(entry?.level).toBe('error');
      expect(String(entry?.fields.err)).toContain('secrets table unreachable');
    });

    it('a function that hangs: 503 secret_unavailable at secretTimeoutMs; the next request asks again', async () => {
      let calls = 0;
      const app = await start({
        secret: () => {
          calls++;
          return calls === 1 ? new Promise<never>(() => {}) : ACME;
        },
        secretTimeoutMs: 200,
      });
      const started = Date.now();
      const hung = await post(app.baseUrl, 'acme', ACME);
      expect(hung).toMatchObject({ status: 503, code: 'secret_unavailable' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(app.handled).toEqual([]);
      expect((await post(app.baseUrl, 'acme', ACME)).status).toBe(200);
      expect(calls).toBe(2);
    });
  });
}

describe('the cache of a secret function', () => {
  it('one call for concurrent deliveries to a path; bounded in entries (least recently used out) and in time', async () => {
    const calls: string[] = [];
    const app = await servers.fetch({
      secret: ({ path }) => {
        calls.push(tenantOf(path) ?? '');
        return new Promise((resolve) => setTimeout(() => resolve(ACME), 50));
      },
      secretCache: { maxEntries: 2, ttlMs: 60_000 },
    });
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(app.baseUrl, 'acme', ACME)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(calls).toEqual(['acme']);
    await post(app.baseUrl, 'b', ACME);
    await post(app.baseUrl, 'c', ACME); // evicts acme, the least recently used
    await post(app.baseUrl, 'acme', ACME);
    expect(calls).toEqual(['acme', 'b', 'c', 'acme']);

    const uncached = await servers.fetch({ secret: () => ACME, secretCache: { ttlMs: 0 } });
    for (let i = 0; i < 3; i++) expect((await post(uncached.baseUrl, 'acme', ACME)).status).toBe(200);
  });

  it('an answer is reused for secretCache.ttlMs on the receiver clock, then asked again', async () => {
    let now = Date.now();
    let calls = 0;
    const crm = createCrmReceiver({
      secret: () => {
        calls++;
        return ACME;
      },
      secretCache: { ttlMs: 5_000 },
      clock: { now: () => now },
      logger: false,
    });
    const send = async () => {
      const delivery = crmDelivery({ secret: ACME });
      const request = new Request('http://localhost/webhooks/crm/acme', {
        method: 'POST',
        body: delivery.body,
        headers: delivery.headers,
      });
      return (await crm.handle(request)).status;
    };
    expect(await send()).toBe(200);
    now += 4_999;
    expect(await send()).toBe(200);
    expect(calls).toBe(1);
    now += 2;
    expect(await send()).toBe(200);
    expect(calls).toBe(2);
  });

  it('never sees the body or the headers: only the path and the route parameters', async () => {
    const seen: unknown[] = [];
    const app = await servers.express({
      secret: (request) => {
        seen.push(request);
        return ACME;
      },
    });
    await post(app.baseUrl, 'acme', ACME);
    expect(seen).toEqual([{ path: '/webhooks/crm/acme', params: { tenant: 'acme' } }]);
  });

  it('refuses a secret function with hand-off but no handoffSecret, and bad limits, when the receiver is created', () => {
    const handoff = { enqueue: async () => 'enqueued' as const };
    expect(() => createCrmReceiver({ secret: () => ACME, handoff })).toThrow(/needs handoffSecret/);
    expect(() => createCrmReceiver({ secret: () => ACME, handoff, handoffSecret: 'short' })).toThrow(
      /handoffSecret: .*shorter/,
    );
    expect(createCrmReceiver({ secret: () => ACME, handoff, handoffSecret: GLOBEX }).service).toBe('crm');
    expect(() => createCrmReceiver({ secret: () => ACME, secretTimeoutMs: 0 })).toThrow(/secretTimeoutMs/);
    expect(() => createCrmReceiver({ secret: () => ACME, secretCache: { maxEntries: -1 } })).toThrow(
      /maxEntries/,
    );
  });
});
