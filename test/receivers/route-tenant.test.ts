/**
 * A route bound to its tenant (`routeTenant`) and the route given to handlers (`context.route`): a
 * tenant signing, with its own secret on its own route, a body that names another tenant is refused
 * 403 `tenant_mismatch` before any handler runs, in direct mode (Express with `:tenant`, and
 * `receiver.handle` on fetch, both behind real servers) and with hand-off (nothing is written; a
 * worker bound to tenants refuses such a job again). Signatures by node:crypto (support.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCrmReceiver,
  createMailReceiver,
  type HandlerContext,
  type LogEntry,
  type SecretRequest,
} from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { jobAction } from '@svc/webhooks/handoff';
import { createInboxWorker, createSqliteInbox } from '@svc/webhooks/sqlite';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchListener, listen } from '../adapters/support/servers.js';
import { resigned } from '../handoff/job-mac.js';
import { captureTarget } from '../handoff/support/capture-target.js';
import { crmDelivery, type Delivery, MAIL_SECRET, mailDelivery } from './support.js';

const SECRETS: Record<string, string> = {
  acme: 'whsec_acme_tenant_secret_0123456789abcdef',
  evil: 'whsec_evil_tenant_secret_0123456789abcdef',
};
const HANDOFF_KEY = 'whsec_handoff_job_key_0123456789abcdef';
const tenantOfPath = (path: string) => /^\/webhooks\/crm\/([^/]+)$/.exec(path)?.[1];
/** Express gives `params.tenant`; on fetch the path says it. */
const routeTenant = ({ params, path }: SecretRequest) => params.tenant ?? tenantOfPath(path);
const secret = (route: SecretRequest) => {
  const tenant = routeTenant(route);
  return tenant === undefined ? undefined : SECRETS[tenant];
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A CRM app with a secret per tenant and the binding, recording each handler run's tenant and route. */
function app(options: { routeTenant?: typeof routeTenant; handlers?: boolean } = {}) {
  const runs: { tenantId: string; route: HandlerContext['route'] }[] = [];
  const logs: LogEntry[] = [];
  const errors: string[] = [];
  const crm = createCrmReceiver({
    secret,
    routeTenant: options.routeTenant ?? routeTenant,
    logger: (entry) => logs.push(entry),
  }).onError((_error, info) => {
    errors.push(info.phase);
  });
  if (options.handlers !== false)
    crm.onAny((event, context) => {
      runs.push({ tenantId: event.tenantId, route: context.route });
    });
  return { crm, runs, logs, errors };
}

type App = ReturnType<typeof app>;
const servers = {
  async express(crm: App['crm']) {
    const server = express();
    server.post('/webhooks/crm/:tenant', createExpressMiddleware(crm));
    const { baseUrl, close } = await listen(createServer(server));
    closers.push(close);
    return baseUrl;
  },
  async fetch(crm: App['crm']) {
    const { baseUrl, close } = await listen(createServer(fetchListener((request) => crm.handle(request))));
    closers.push(close);
    return baseUrl;
  },
};

async function post(baseUrl: string, route: string, delivery: Delivery) {
  const response = await fetch(`${baseUrl}/webhooks/crm/${route}`, {
    method: 'POST',
    body: delivery.body,
    headers: delivery.headers,
  });
  const answer = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: answer.error?.code };
}

for (const [name, serve] of Object.entries(servers)) {
  describe(`a route bound to its tenant (${name})`, () => {
    it('tenant "evil" signing tenant_id "acme" on its own route is refused 403 tenant_mismatch; acme\'s own delivery of the same body runs', async () => {
      const { crm, runs, logs } = app();
      const baseUrl = await serve(crm);
      const forged = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.evil });
      expect(await post(baseUrl, 'evil', forged)).toEqual({ status: 403, code: 'tenant_mismatch' });
      // The sender retries any non-2xx (crm-service §6 rule 5): every attempt is refused the same way.
      expect(await post(baseUrl, 'evil', forged)).toEqual({ status: 403, code: 'tenant_mismatch' });
      expect(runs).toEqual([]);
      const refusal = logs.find((entry) => entry.fields.code === 'tenant_mismatch');
      expect(refusal).toMatchObject({
        level: 'error',
        fields: { tenant: 'acme', routeTenant: 'evil', deliveryId: forged.deliveryId },
      });

      const genuine = crmDelivery('deal.won', {
        deliveryId: forged.deliveryId,
        tenantId: 'acme',
        secret: SECRETS.acme,
      });
      expect(await post(baseUrl, 'acme', genuine)).toEqual({ status: 200, code: undefined });
      expect(runs).toEqual([
        {
          tenantId: 'acme',
          route: { path: '/webhooks/crm/acme', params: name === 'express' ? { tenant: 'acme' } : {} },
        },
      ]);
    });

    it('refused even where no handler is registered (not acknowledged as ignored), and on a route bound to no tenant', async () => {
      const unbound = app({
        handlers: false,
        routeTenant: ({ path }) => (path.endsWith('/acme') ? 'acme' : undefined),
      });
      const baseUrl = await serve(unbound.crm);
      const forged = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.evil });
      expect(await post(baseUrl, 'evil', forged)).toEqual({ status: 403, code: 'tenant_mismatch' });
      const own = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.acme });
      expect(await post(baseUrl, 'acme', own)).toEqual({ status: 200, code: undefined });
    });
  });
}

describe('routeTenant', () => {
  it('a function that throws answers 500 internal_error (the sender retries), reported to onError; no handler runs', async () => {
    const { crm, runs, errors } = app({
      routeTenant: () => {
        throw new Error('tenant directory down');
      },
    });
    const delivery = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.acme });
    const verdict = await crm.receive({ ...delivery, path: '/webhooks/crm/acme' });
    expect(verdict).toMatchObject({ kind: 'failed', code: 'internal_error' });
    expect(runs).toEqual([]);
    expect(errors).toEqual(['internal']);
  });

  it('must be a function', () => {
    expect(() =>
      createCrmReceiver({ secret: SECRETS.acme!, routeTenant: 'acme' as unknown as typeof routeTenant }),
    ).toThrow(/routeTenant must be a function/);
  });
});

describe('context.route', () => {
  it('a mail handler in direct mode sees the route of its request (handle on fetch: the pathname)', async () => {
    const routes: HandlerContext['route'][] = [];
    const mail = createMailReceiver({ secret: MAIL_SECRET }).on('delivered', (_event, { route }) => {
      routes.push(route);
    });
    const delivery = mailDelivery('delivered');
    const request = new Request('http://127.0.0.1/hooks/mail/eu?x=1', {
      method: 'POST',
      body: delivery.body,
      headers: delivery.headers,
    });
    expect((await mail.handle(request)).status).toBe(200);
    // `receive(input)` without a path: the documented default.
    await mail.receive({ ...mailDelivery('delivered'), path: undefined });
    expect(routes).toEqual([
      { path: '/hooks/mail/eu', params: {} },
      { path: '/', params: {} },
    ]);
    expect(Object.isFrozen(routes[0])).toBe(true);
  });
});

describe('with hand-off', () => {
  it('a forged cross-tenant body is refused before anything is written; a genuine one carries its route to the worker', async () => {
    const target = captureTarget();
    const receiving = createCrmReceiver({ secret, routeTenant, handoff: target, handoffSecret: HANDOFF_KEY });
    const forged = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.evil });
    const refused = await receiving.receive({ ...forged, path: '/webhooks/crm/evil' });
    expect(refused).toMatchObject({ kind: 'refused', code: 'tenant_mismatch' });
    expect(target.jobs).toEqual([]);

    const genuine = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.acme });
    const params = { tenant: 'acme' };
    expect(await receiving.receive({ ...genuine, path: '/webhooks/crm/acme', params })).toMatchObject({
      kind: 'queued',
    });
    expect(target.jobs[0]!.route).toEqual({ path: '/webhooks/crm/acme', params });

    const runs: { tenantId: string; route: HandlerContext['route'] }[] = [];
    const worker = createCrmReceiver({ secret, routeTenant, handoffSecret: HANDOFF_KEY }).onAny(
      (event, { route }) => {
        runs.push({ tenantId: event.tenantId, route });
      },
    );
    expect(await worker.runJob(target.jobs[0])).toMatchObject({ kind: 'handled' });
    expect(runs).toEqual([{ tenantId: 'acme', route: { path: '/webhooks/crm/acme', params } }]);
  });

  it("a worker bound to tenants refuses a job whose route is another tenant's (written by a receiver without the binding): dead-lettered, no handler", async () => {
    const target = captureTarget();
    const unbound = createCrmReceiver({ secret, handoff: target, handoffSecret: HANDOFF_KEY });
    const forged = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.evil });
    expect(await unbound.receive({ ...forged, path: '/webhooks/crm/evil' })).toMatchObject({
      kind: 'queued',
    });
    const runs: string[] = [];
    const worker = createCrmReceiver({ secret, routeTenant, handoffSecret: HANDOFF_KEY }).onAny((event) => {
      runs.push(event.deliveryId);
    });
    const verdict = await worker.runJob(target.jobs[0]);
    expect(verdict).toMatchObject({ kind: 'refused', code: 'tenant_mismatch' });
    expect(jobAction(verdict, { attempt: 1, maxAttempts: 5 })).toMatchObject({ type: 'dead-letter' });
    // The route is under the MAC: moving the job to acme's route makes it a job no receiver wrote.
    const moved = { ...target.jobs[0]!, route: { path: '/webhooks/crm/acme', params: {} } };
    expect(await worker.runJob(moved)).toMatchObject({ kind: 'refused', code: 'job_invalid' });
    // Signed again under the key with acme's route, it is one acme's receiver could have written.
    expect(await worker.runJob(resigned(moved, HANDOFF_KEY))).toMatchObject({ kind: 'handled' });
    expect(runs).toEqual([forged.deliveryId]);
  });
});

describe('with the database inbox (SQLite)', () => {
  it('a forged cross-tenant body writes no row; a genuine row runs with its stored route as context.route', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-tenant-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const inbox = createSqliteInbox({ path: join(dir, 'app.sqlite') });
    await inbox.migrate();
    const runs: { tenantId: string; route: HandlerContext['route'] }[] = [];
    const crm = createCrmReceiver({ secret, routeTenant, handoff: inbox, logger: () => {} }).onAny(
      (event, { route }) => {
        runs.push({ tenantId: event.tenantId, route });
      },
    );
    const forged = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.evil });
    expect(await crm.receive({ ...forged, path: '/webhooks/crm/evil' })).toMatchObject({
      kind: 'refused',
      code: 'tenant_mismatch',
    });
    const genuine = crmDelivery('deal.won', { tenantId: 'acme', secret: SECRETS.acme });
    const params = { tenant: 'acme' };
    expect(await crm.receive({ ...genuine, path: '/webhooks/crm/acme', params })).toMatchObject({
      kind: 'queued',
    });
    expect((await inbox.list()).rows.map((row) => row.deliveryId)).toEqual([genuine.deliveryId]);
    const worker = createInboxWorker({ receiver: crm, inbox });
    expect(await worker.runOnce()).toBe(1);
    expect(runs).toEqual([{ tenantId: 'acme', route: { path: '/webhooks/crm/acme', params } }]);
  });
});
