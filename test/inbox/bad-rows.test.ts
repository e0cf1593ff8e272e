/**
 * Rows and inputs the inbox must survive, on real PostgreSQL and a real SQLite file: a delivery whose
 * ordering key or dedup key holds U+0000 (PostgreSQL text cannot), a failure message holding one, and
 * rows holding what the inbox never writes (a time past 2^53, headers that are not JSON, a row written
 * by hand): listed and shown with the reason, moved to `dead` by the worker, never a failed listing.
 */
import { createHash } from 'node:crypto';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type DatabaseSuite, forEachInboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};
const MAX_BIGINT = '9223372036854775807';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const suite: DatabaseSuite = (name, open, close) => {
  describe(`inbox bad rows on ${name}`, () => {
    const database = openedInboxDatabase(open, close);

    async function crmInbox() {
      const table = uniqueTable();
      const inbox = database().inbox({ table });
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet });
      return { table, inbox, receiver };
    }

    it('stores an authentic delivery whose deal_id holds U+0000 and runs it once, in order with its deal', async () => {
      const { inbox, receiver } = await crmInbox();
      const dealId = 'd_\u0000_1';
      const runs: string[] = [];
      receiver.on(['deal.stage_changed', 'deal.won'], (event) => {
        runs.push(`${event.name} ${JSON.stringify(event.data.deal_id)}`);
      });
      const stage = crmDelivery('deal.stage_changed', {
        data: { deal_id: dealId, title: 't', stage_id: 's_2' },
      });
      const won = crmDelivery('deal.won', { data: { deal_id: dealId, title: 't', value: 1 } });
      expect((await deliver(receiver, stage)).status).toBe(200);
      expect((await deliver(receiver, won)).status).toBe(200);
      expect(await deliver(receiver, won)).toMatchObject({ status: 200, kind: 'duplicate' });

      // One key for the deal, the same on every host: its text up to the U+0000, then a SHA-256.
      const key = `crm:deal:sha256:${sha256(`crm:deal:${dealId}`)}`;
      const { rows } = await inbox.list({ orderingKey: `crm:deal:${dealId}` });
      expect(rows.map((r) => [r.event, r.orderingKey, r.malformed])).toEqual([
        ['deal.won', key, undefined],
        ['deal.stage_changed', key, undefined],
      ]);
      const worker = createInboxWorker({ receiver, inbox, transactions: database().transactions() });
      expect(await worker.runOnce()).toBe(2);
      expect(runs).toEqual(['deal.stage_changed "d_\\u0000_1"', 'deal.won "d_\\u0000_1"']);
      expect((await inbox.list({ status: 'handled' })).rows).toHaveLength(2);
      expect(await worker.runOnce()).toBe(0);
    });

    it('a dedup key holding U+0000 (message-event strategy) is hashed: stored once, a copy is a duplicate', async () => {
      const table = uniqueTable();
      const inbox = database().inbox({ table });
      await inbox.migrate();
      const receiver = createMailReceiver({
        secret: MAIL_SECRET,
        handoff: inbox,
        dedupKey: 'message-event',
        logger: quiet,
      });
      const first = mailDelivery('delivered', { messageId: 'm_\u0000' });
      const again = mailDelivery('delivered', { messageId: 'm_\u0000' }); // another id, same event
      expect((await deliver(receiver, first)).status).toBe(200);
      expect(await deliver(receiver, again)).toMatchObject({ status: 200, kind: 'duplicate' });
      const [row] = (await inbox.list()).rows;
      expect(row!.dedupKey).toBe(`mail:sha256:${sha256('mail:message:delivered:m_\u0000')}`);
      expect(row!.orderingKey).toBe(`mail:message:sha256:${sha256('mail:message:m_\u0000')}`);
      let runs = 0;
      receiver.on('delivered', () => void runs++);
      expect(await createInboxWorker({ receiver, inbox }).runOnce()).toBe(1);
      expect(runs).toBe(1);
    });

    it('records a failure whose message holds U+0000 (escaped): the row is dead, not left processing', async () => {
      const { inbox, receiver } = await crmInbox();
      receiver.on('deal.won', (event) => {
        throw new Error(`no deal ${event.data.deal_id}`);
      });
      await deliver(
        receiver,
        crmDelivery('deal.won', { data: { deal_id: 'd\u0000', title: 't', value: 1 } }),
      );
      const worker = createInboxWorker({ receiver, inbox, maxAttempts: 1 });
      expect(await worker.runOnce()).toBe(1);
      const [row] = (await inbox.list()).rows;
      expect(row).toMatchObject({ status: 'dead', lastErrorCode: 'handler_failed' });
      expect(row!.lastErrorMessage).toContain('no deal d\\u0000');
    });

    it('lists and shows malformed rows with the reason; the worker moves those it claims to dead (job_invalid) at once', async () => {
      const { table, inbox, receiver } = await crmInbox();
      const handled: string[] = [];
      receiver.on('deal.won', (event) => void handled.push(event.deliveryId));
      const [far, headers, received, ok] = ['d_far', 'd_headers', 'd_received', 'd_ok'].map((deal_id) =>
        crmDelivery('deal.won', { data: { deal_id, title: 't', value: 1 } }),
      );
      for (const delivery of [far!, headers!, received!, ok!])
        expect((await deliver(receiver, delivery)).status).toBe(200);
      const where = (delivery: { deliveryId: string }) => `WHERE delivery_id = '${delivery.deliveryId}'`;
      await database().sql(`UPDATE ${table} SET run_at = ${MAX_BIGINT} ${where(far!)}`);
      await database().sql(`UPDATE ${table} SET headers = 'not json' ${where(headers!)}`);
      await database().sql(`UPDATE ${table} SET received_at = ${MAX_BIGINT} ${where(received!)}`);
      // A row written by hand: well formed, but no signature of the service.
      const body = database().name === 'postgres' ? `'\\x7b7d'::bytea` : `x'7b7d'`;
      await database().sql(
        `INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, status, run_at, received_at, headers, body) VALUES ('crm:delivery:by-hand', 'crm', 'deal.won', 'by-hand', 0, 'received', 0, 0, '{"x-svc-signature":"sha256=${'0'.repeat(64)}"}', ${body})`,
      );

      const byDelivery = async () =>
        new Map((await inbox.list()).rows.map((row) => [row.deliveryId, row] as const));
      const listed = await byDelivery();
      expect(listed.size).toBe(5);
      expect(listed.get(far!.deliveryId)?.malformed).toBe('run_at is not a time in epoch ms.');
      expect(listed.get(received!.deliveryId)?.malformed).toBe('received_at is not a time in epoch ms.');
      expect(listed.get(ok!.deliveryId)?.malformed).toBeUndefined();
      expect(listed.get(headers!.deliveryId)?.malformed).toBeUndefined(); // list reads no headers
      const shown = await inbox.show(listed.get(headers!.deliveryId)!.id);
      expect(shown).toMatchObject({ headers: {}, malformed: 'headers is not a JSON object of strings.' });
      expect(JSON.parse(new TextDecoder().decode(shown!.body)).data.deal_id).toBe('d_headers');
      expect((await inbox.show(listed.get(far!.deliveryId)!.id))?.malformed).toBe(
        'run_at is not a time in epoch ms.',
      );

      // Each malformed row it claims is dead after one attempt, never retried; the good row runs.
      expect(await createInboxWorker({ receiver, inbox, backoffMs: () => 0 }).runOnce()).toBe(4);
      expect(handled).toEqual([ok!.deliveryId]);
      const after = await byDelivery();
      for (const delivery of [headers!, received!, { deliveryId: 'by-hand' }])
        expect(after.get(delivery.deliveryId), delivery.deliveryId).toMatchObject({
          status: 'dead',
          attempts: 1,
          lastErrorCode: 'job_invalid',
        });
      expect(after.get(headers!.deliveryId)?.lastErrorMessage).toContain('headers is not a JSON object');
      // A row whose run_at is no time never comes due: it waits, listed as malformed.
      expect(after.get(far!.deliveryId)).toMatchObject({ status: 'received', attempts: 0 });
    });

    it('a failure of the inbox names the inbox, never a dedup store', async () => {
      const inbox = database().inbox({ table: uniqueTable('missing') });
      const error = await inbox.list().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'store_unavailable' });
      expect((error as Error).message).toMatch(/^The (Postgres|SQLite) inbox did not answer/);
      expect((error as Error).message).not.toContain('dedup');
    });

    it('a filter on an event holding U+0000 is refused as options_invalid; a key holding one is found', async () => {
      const { inbox, receiver } = await crmInbox();
      const dealId = 'd_\u0000_2';
      const won = crmDelivery('deal.won', { data: { deal_id: dealId, title: 't', value: 1 } });
      expect((await deliver(receiver, won)).status).toBe(200);
      await expect(inbox.list({ event: 'deal.won\u0000' })).rejects.toMatchObject({
        code: 'options_invalid',
      });
      await expect(inbox.redrive({ event: '\u0000' })).rejects.toMatchObject({ code: 'options_invalid' });
      const { rows } = await inbox.list({ orderingKey: `crm:deal:${dealId}` });
      expect(rows.map((r) => r.event)).toEqual(['deal.won']);
    });
  });
};

forEachInboxDatabase(suite);
