/**
 * Authentic rows only (docs/inbox-worker.md "How rows are authenticated"), on real PostgreSQL and a real
 * SQLite file: the worker verifies the service's own signature, stored with the row as received,
 * again over the stored bytes with its receiver's secrets. A row written by hand, or changed after
 * receipt (a body byte, the event header), is `dead` with `job_invalid`, reported once, and never
 * runs a handler. A row verified under an old secret still runs after a rotation, and per-route
 * secrets (a `secret` function) work with the inbox: the stored route's secrets verify it.
 */
import { createHmac } from 'node:crypto';
import { createCrmReceiver, createMailReceiver, type SecretRequest } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it, vi } from 'vitest';
import { getNodeCrypto, resetNodeCryptoCache } from '../../src/verify/node-crypto.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type DatabaseSuite, forEachInboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};
const NEW_SECRET = 'whsec_rotated_crm_0123456789abcdefghij';
const TENANT_SECRETS: Record<string, string> = {
  acme: 'whsec_tenant_acme_0123456789abcdefghij',
  evil: 'whsec_tenant_evil_0123456789abcdefghij',
};
const sign = (body: Uint8Array | string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const suite: DatabaseSuite = (name, open, close) => {
  describe(`authentic inbox rows on ${name}`, () => {
    const database = openedInboxDatabase(open, close);
    const bytes = (body: Uint8Array) =>
      database().name === 'postgres'
        ? `'\\x${Buffer.from(body).toString('hex')}'::bytea`
        : `x'${Buffer.from(body).toString('hex')}'`;
    const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

    async function crmSetup(secret: string | readonly string[] = CRM_SECRET) {
      const table = uniqueTable('auth');
      const inbox = database().inbox({ table });
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret, handoff: inbox, logger: quiet });
      const ran: string[] = [];
      receiver.on(['deal.won', 'deal.lost'], (event) => void ran.push(`${event.name} ${event.deliveryId}`));
      const refusals: string[] = [];
      receiver.onError((error, info) => {
        if ((error as { code?: string }).code === 'job_invalid') refusals.push(String(info.deliveryId));
      });
      return { table, inbox, receiver, ran, refusals };
    }

    it('a row written by hand, with a signature of its own making, is dead (job_invalid), reported once, never run', async () => {
      const { table, inbox, receiver, ran, refusals } = await crmSetup();
      const forged = crmDelivery('deal.won', { data: { deal_id: 'd_forged', title: 't', value: 1_000_000 } });
      const headers = JSON.stringify({
        'x-svc-event': 'deal.won',
        'x-svc-delivery': forged.deliveryId,
        'x-svc-signature': sign(forged.body, 'whsec_not_the_secret_0123456789abcdef'),
      });
      await database().sql(
        `INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, status, run_at, received_at, headers, body) VALUES ('crm:delivery:${forged.deliveryId}', 'crm', 'deal.won', '${forged.deliveryId}', 0, 'received', 0, 0, ${quote(headers)}, ${bytes(forged.body)})`,
      );
      const genuine = crmDelivery('deal.won');
      expect((await deliver(receiver, genuine)).status).toBe(200);

      const worker = createInboxWorker({ receiver, inbox, backoffMs: () => 0 });
      expect(await worker.runOnce()).toBe(2);
      expect(ran).toEqual([`deal.won ${genuine.deliveryId}`]);
      const [row] = (await inbox.list({ status: 'dead' })).rows;
      expect(row).toMatchObject({ deliveryId: forged.deliveryId, attempts: 1, lastErrorCode: 'job_invalid' });
      expect(row!.lastErrorMessage).toContain('has a signature that does not verify');
      expect(refusals).toEqual([forged.deliveryId]);
      expect(await worker.runOnce()).toBe(0);
    });

    it('a genuine row changed after receipt (a body byte, the event header) is dead without running a handler', async () => {
      const { table, inbox, receiver, ran, refusals } = await crmSetup();
      const flipped = crmDelivery('deal.won', { data: { deal_id: 'd_flip', title: 't', value: 10 } });
      const relabelled = crmDelivery('deal.won', { data: { deal_id: 'd_label', title: 't', value: 10 } });
      const untouched = crmDelivery('deal.won', { data: { deal_id: 'd_ok', title: 't', value: 10 } });
      for (const delivery of [flipped, relabelled, untouched])
        expect((await deliver(receiver, delivery)).status).toBe(200);
      const body = Buffer.from(flipped.body);
      body[body.indexOf('10')] = '9'.charCodeAt(0); // value 10 -> 90
      await database().sql(
        `UPDATE ${table} SET body = ${bytes(body)} WHERE delivery_id = '${flipped.deliveryId}'`,
      );
      const headers = JSON.stringify({
        'x-svc-event': 'deal.lost',
        'x-svc-delivery': relabelled.deliveryId,
        'x-svc-signature': relabelled.headers['x-svc-signature'],
      });
      await database().sql(
        `UPDATE ${table} SET headers = ${quote(headers)}, event = 'deal.lost' WHERE delivery_id = '${relabelled.deliveryId}'`,
      );

      expect(await createInboxWorker({ receiver, inbox, backoffMs: () => 0 }).runOnce()).toBe(3);
      expect(ran).toEqual([`deal.won ${untouched.deliveryId}`]);
      const dead = new Map((await inbox.list({ status: 'dead' })).rows.map((r) => [r.deliveryId, r]));
      expect(dead.get(flipped.deliveryId)).toMatchObject({ attempts: 1, lastErrorCode: 'job_invalid' });
      expect(dead.get(relabelled.deliveryId)).toMatchObject({ attempts: 1, lastErrorCode: 'job_invalid' });
      expect(dead.size).toBe(2);
      expect(refusals.sort()).toEqual([flipped.deliveryId, relabelled.deliveryId].sort());
    });

    it('without node:crypto (Web Crypto only, as a receiver made on an edge runtime verifies): a genuine row runs, a changed one is dead', async () => {
      // The receiver chooses its verifier when it is made; node-crypto.ts reads the edge marker.
      (globalThis as { EdgeRuntime?: string }).EdgeRuntime = 'test';
      resetNodeCryptoCache();
      const sign = vi.spyOn(crypto.subtle, 'sign');
      try {
        expect(getNodeCrypto()).toBeNull();
        const { table, inbox, receiver, ran, refusals } = await crmSetup();
        const genuine = crmDelivery('deal.won', { data: { deal_id: 'd_web', title: 't', value: 10 } });
        const changed = crmDelivery('deal.won', {
          data: { deal_id: 'd_web_changed', title: 't', value: 10 },
        });
        for (const delivery of [genuine, changed])
          expect((await deliver(receiver, delivery)).status).toBe(200);
        const body = Buffer.from(changed.body);
        body[body.indexOf('10')] = '9'.charCodeAt(0);
        await database().sql(
          `UPDATE ${table} SET body = ${bytes(body)} WHERE delivery_id = '${changed.deliveryId}'`,
        );
        sign.mockClear();
        expect(await createInboxWorker({ receiver, inbox, backoffMs: () => 0 }).runOnce()).toBe(2);
        // One HMAC per row, through crypto.subtle.
        expect(sign).toHaveBeenCalledTimes(2);
        expect(ran).toEqual([`deal.won ${genuine.deliveryId}`]);
        expect((await inbox.list({ status: 'dead' })).rows).toMatchObject([
          { deliveryId: changed.deliveryId, lastErrorCode: 'job_invalid' },
        ]);
        expect(refusals).toEqual([changed.deliveryId]);
      } finally {
        sign.mockRestore();
        delete (globalThis as { EdgeRuntime?: string }).EdgeRuntime;
        resetNodeCryptoCache();
      }
    });

    it('an email row whose event header names another event than its body is dead, never run', async () => {
      const table = uniqueTable('auth_mail');
      const inbox = database().inbox({ table });
      await inbox.migrate();
      const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
      const ran: string[] = [];
      receiver.on(['delivered', 'bounced'], (event) => void ran.push(event.name));
      const delivery = mailDelivery('delivered');
      expect((await deliver(receiver, delivery)).status).toBe(200);
      const [stored] = await database().sql(`SELECT headers FROM ${table}`);
      const headers = JSON.stringify({
        ...JSON.parse(String(stored!.headers)),
        'x-svcmail-event': 'bounced',
      });
      await database().sql(`UPDATE ${table} SET headers = ${quote(headers)}, event = 'bounced'`);
      expect(await createInboxWorker({ receiver, inbox }).runOnce()).toBe(1);
      expect(ran).toEqual([]);
      expect((await inbox.list()).rows[0]).toMatchObject({ status: 'dead', lastErrorCode: 'job_invalid' });
    });

    it('a row verified under the old secret runs after the rotation (secrets [new, old]); without the old one it is dead', async () => {
      const { inbox, receiver: before } = await crmSetup(CRM_SECRET);
      const first = crmDelivery('deal.won', { data: { deal_id: 'd_old', title: 't', value: 1 } });
      const second = crmDelivery('deal.won', { data: { deal_id: 'd_old2', title: 't', value: 1 } });
      expect((await deliver(before, first)).status).toBe(200);
      expect((await deliver(before, second)).status).toBe(200);

      const rotated = createCrmReceiver({ secret: [NEW_SECRET, CRM_SECRET], handoff: inbox, logger: quiet });
      const ran: string[] = [];
      rotated.on('deal.won', (event) => void ran.push(`${event.deliveryId} ${event.secretIndex}`));
      expect(await createInboxWorker({ receiver: rotated, inbox }).runOnce()).toBe(2);
      // Verified by the old secret, the second of the rotated receiver's list.
      expect(ran.sort()).toEqual([`${first.deliveryId} 1`, `${second.deliveryId} 1`].sort());
      expect((await inbox.list({ status: 'handled' })).rows).toHaveLength(2);

      const table = uniqueTable('auth_rot');
      const later = database().inbox({ table });
      await later.migrate();
      const old = createCrmReceiver({ secret: CRM_SECRET, handoff: later, logger: quiet });
      expect((await deliver(old, crmDelivery('deal.won'))).status).toBe(200);
      const dropped = createCrmReceiver({ secret: NEW_SECRET, handoff: later, logger: quiet });
      const runs: string[] = [];
      dropped.on('deal.won', (event) => void runs.push(event.deliveryId));
      expect(await createInboxWorker({ receiver: dropped, inbox: later }).runOnce()).toBe(1);
      expect(runs).toEqual([]);
      expect((await later.list()).rows[0]).toMatchObject({ status: 'dead', lastErrorCode: 'job_invalid' });
    });

    it("per-route secrets work with the inbox: each row is verified again with its route's secret; a row moved to another route is dead", async () => {
      const table = uniqueTable('auth_route');
      const inbox = database().inbox({ table });
      await inbox.migrate();
      const lookups: string[] = [];
      const secret = ({ params }: SecretRequest) => {
        lookups.push(params.tenant ?? '');
        return TENANT_SECRETS[params.tenant ?? ''];
      };
      const receiver = createCrmReceiver({
        secret,
        handoff: inbox,
        logger: quiet,
        secretCache: { ttlMs: 0 },
      });
      const ran: string[] = [];
      receiver.on('deal.won', (event) => void ran.push(event.deliveryId));
      const send = (tenant: string) => {
        const delivery = crmDelivery('deal.won', { secret: TENANT_SECRETS[tenant] });
        const route = { path: `/webhooks/crm/${tenant}`, params: { tenant } };
        return receiver
          .receive({ body: delivery.body, headers: delivery.headers, method: 'POST', ...route })
          .then((verdict) => ({ delivery, verdict }));
      };
      const acme = await send('acme');
      const evil = await send('evil');
      const moved = await send('evil');
      for (const { verdict } of [acme, evil, moved]) expect(verdict.kind).toBe('queued');
      // Signed with evil's secret, then made to look as if it came to acme's route.
      await database().sql(
        `UPDATE ${table} SET route = ${quote(JSON.stringify({ path: '/webhooks/crm/acme', params: { tenant: 'acme' } }))} WHERE delivery_id = '${moved.delivery.deliveryId}'`,
      );
      const [stored] = await database().sql(
        `SELECT route FROM ${table} WHERE delivery_id = '${acme.delivery.deliveryId}'`,
      );
      expect(JSON.parse(String(stored!.route))).toEqual({
        path: '/webhooks/crm/acme',
        params: { tenant: 'acme' },
      });

      lookups.length = 0;
      expect(await createInboxWorker({ receiver, inbox }).runOnce()).toBe(3);
      expect(ran.sort()).toEqual([acme.delivery.deliveryId, evil.delivery.deliveryId].sort());
      expect(lookups.sort()).toEqual(['acme', 'acme', 'evil']);
      const dead = (await inbox.list({ status: 'dead' })).rows;
      expect(dead.map((r) => [r.deliveryId, r.lastErrorCode])).toEqual([
        [moved.delivery.deliveryId, 'job_invalid'],
      ]);
    });
  });
};

forEachInboxDatabase(suite);
