/**
 * The database inbox on real PostgreSQL and a real SQLite file: a receiver in inbox mode writes one row
 * per delivery and answers at once; the worker runs the rows in the app's transaction, retries,
 * dead-letters, and the library functions list, show, re-drive and purge them.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { forEachInboxDatabase, type InboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};

function suite(name: string, open: () => Promise<InboxDatabase>, close: () => Promise<void>) {
  describe(`inbox on ${name}`, () => {
    const opened = openedInboxDatabase(open, close);

    async function setup(options: { fail?: (deliveryId: string, attempt: number) => boolean } = {}) {
      const table = uniqueTable();
      const business = uniqueTable('business');
      // No unique constraint: a second run of a handler would show as a second row.
      await opened().sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet });
      const runs: string[] = [];
      receiver.on('deal.won', async (event, context) => {
        runs.push(event.deliveryId);
        await opened().insertBusiness(context.tx, business, event.deliveryId);
        if (options.fail?.(event.deliveryId, context.attempt ?? 0)) throw new Error('downstream refused');
      });
      const businessRows = async () =>
        (await opened().sql(`SELECT delivery_id FROM ${business} ORDER BY delivery_id`)).map((r) =>
          String(r.delivery_id),
        );
      return { table, business, inbox, receiver, runs, businessRows };
    }

    it('acknowledges once the row is written, one row per delivery; the worker runs it in the app transaction', async () => {
      const { inbox, receiver, businessRows, table } = await setup();
      const a = crmDelivery('deal.won');
      const b = crmDelivery('deal.won', { data: { deal_id: 'd_2', title: 'Other', value: 3 } });
      expect((await deliver(receiver, a)).status).toBe(200);
      expect((await deliver(receiver, a)).kind).toBe('duplicate');
      expect((await deliver(receiver, b)).status).toBe(200);
      const { rows } = await inbox.list();
      expect(rows.map((r) => [r.deliveryId, r.status, r.orderingKey])).toEqual([
        [b.deliveryId, 'received', 'crm:deal:d_2'],
        [a.deliveryId, 'received', 'crm:deal:d_1'],
      ]);
      const detail = await inbox.show(rows[1]!.id);
      expect(new TextDecoder().decode(detail!.body)).toBe(new TextDecoder().decode(a.body));
      // The headers that run it again: the service's signature as received (the worker verifies it
      // again over the stored bytes), and never the secret.
      expect(detail!.headers).toEqual({
        'x-svc-event': 'deal.won',
        'x-svc-delivery': a.deliveryId,
        'x-svc-signature': a.headers['x-svc-signature'],
      });
      const raw = JSON.stringify(await opened().sql(`SELECT headers, route FROM ${table}`));
      expect(raw).not.toContain(CRM_SECRET);

      const worker = createInboxWorker({ receiver, inbox, transactions: opened().transactions() });
      expect(await worker.runOnce()).toBe(2);
      expect(await businessRows()).toEqual([a.deliveryId, b.deliveryId].sort());
      const after = await inbox.list({ status: 'handled' });
      expect(after.rows).toHaveLength(2);
      expect(after.rows.every((r) => r.attempts === 1 && r.handledAt !== null)).toBe(true);
      expect(await worker.runOnce()).toBe(0);
    });

    it('a failed run rolls its writes back, is retried with backoff, then dead after maxAttempts; re-drive runs it again', async () => {
      let failing = true;
      const { inbox, receiver, businessRows, runs } = await setup({ fail: () => failing });
      const phases: string[] = [];
      receiver.onError((_error, { phase }) => phases.push(phase));
      const delivery = crmDelivery('deal.won');
      await deliver(receiver, delivery);
      const worker = createInboxWorker({
        receiver,
        inbox,
        transactions: opened().transactions(),
        maxAttempts: 3,
        backoffMs: () => 0,
      });
      expect(await worker.runOnce()).toBe(3);
      expect(runs).toHaveLength(3);
      expect(await businessRows()).toEqual([]); // each run's insert rolled back with it
      const [dead] = (await inbox.list({ status: 'dead' })).rows;
      expect(dead).toMatchObject({ attempts: 3, lastErrorCode: 'handler_failed' });
      expect(dead!.lastErrorMessage).toContain('downstream refused');
      expect(phases.filter((p) => p === 'handler')).toHaveLength(3);

      failing = false;
      expect(await inbox.redrive({ status: 'dead', event: 'deal.won' })).toBe(1);
      expect(await worker.runOnce()).toBe(1);
      expect(await businessRows()).toEqual([delivery.deliveryId]);
      expect((await inbox.list({ status: 'handled' })).rows).toHaveLength(1);
      // A handled row is never re-driven (its effects happened).
      expect(await inbox.redrive({ id: dead!.id })).toBe(0);
      await expect(inbox.redrive({ status: 'handled' })).rejects.toMatchObject({ code: 'options_invalid' });
    });

    it('without a transaction adapter the row is completed after the handlers (today’s guarantee)', async () => {
      const table = uniqueTable();
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
      const seen: unknown[] = [];
      receiver.on('delivered', (_event, context) => {
        seen.push(context.tx);
      });
      await deliver(receiver, mailDelivery('delivered'));
      expect(await createInboxWorker({ receiver, inbox }).runOnce()).toBe(1);
      expect(seen).toEqual([undefined]);
      expect((await inbox.list({ status: 'handled' })).rows[0]?.orderingKey).toBe('mail:message:msg_1');
    });

    it('a stale fencing token changes nothing: a run whose lease was taken over rolls back', async () => {
      let now = Date.now();
      const clock = { now: () => now };
      const table = uniqueTable();
      const business = uniqueTable('business');
      await opened().sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
      const inbox = opened().inbox({ table, clock, callTimeoutMs: 300 });
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet, clock });
      let taken = false;
      receiver.on('deal.won', async (event, context) => {
        await opened().insertBusiness(context.tx, business, event.deliveryId);
        if (!taken) {
          taken = true;
          // The lease ends while this handler runs; another worker claims the row (a new token).
          now += 60_000;
          const other = createInboxWorker({ receiver: stub(), inbox });
          await other.runOnce();
        }
      });
      await deliver(receiver, crmDelivery('deal.won'));
      const worker = createInboxWorker({
        receiver,
        inbox,
        transactions: opened().transactions(),
        leaseMs: 1_000,
      });
      await worker.runOnce();
      const [count] = await opened().sql(`SELECT count(*) AS n FROM ${business}`);
      const [row] = (await inbox.list()).rows;
      if (opened().name === 'postgres') {
        // The takeover claimed the row (fence 2) and failed it: the first run's completion matched no
        // row, so its transaction rolled back with the business write.
        expect(row).toMatchObject({ status: 'failed', fence: 2 });
        expect(Number(count!.n)).toBe(0);
      } else {
        // SQLite: the first run's transaction holds the write lock; the takeover's claim times out.
        expect(row).toMatchObject({ status: 'handled', fence: 1 });
        expect(Number(count!.n)).toBe(1);
      }
    });

    it('purges handled rows older than the retention (default 90 days)', async () => {
      let now = Date.now();
      const clock = { now: () => now };
      const table = uniqueTable();
      const inbox = opened().inbox({ table, clock });
      await inbox.migrate();
      const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet, clock });
      receiver.on('delivered', () => {});
      await deliver(receiver, mailDelivery('delivered'));
      await deliver(receiver, mailDelivery('delivered', { messageId: 'm_2' }));
      await createInboxWorker({ receiver, inbox }).runOnce();
      await deliver(receiver, mailDelivery('delivered', { messageId: 'm_3' })); // never run
      now += 89 * 86_400_000;
      expect(await inbox.purge()).toBe(0);
      now += 2 * 86_400_000;
      expect(await inbox.purge()).toBe(2);
      expect((await inbox.list()).rows.map((r) => r.status)).toEqual(['received']);
      expect(await inbox.purge({ olderThanDays: 0 })).toBe(0);
    });

    it('lists a bounded page at a time, with filters', async () => {
      const table = uniqueTable();
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet });
      for (let i = 0; i < 5; i++)
        await deliver(
          receiver,
          crmDelivery('deal.won', { data: { deal_id: `d_${i}`, title: 't', value: 1 } }),
        );
      await deliver(receiver, crmDelivery('deal.lost'));
      const first = await inbox.list({ event: 'deal.won', limit: 2 });
      expect(first.rows).toHaveLength(2);
      const second = await inbox.list({ event: 'deal.won', limit: 2, before: first.next! });
      const third = await inbox.list({ event: 'deal.won', limit: 2, before: second.next! });
      expect(third.rows).toHaveLength(1);
      expect(third.next).toBeUndefined();
      expect((await inbox.list({ orderingKey: 'crm:deal:d_3' })).rows).toHaveLength(1);
      await expect(inbox.list({ limit: 501 })).rejects.toMatchObject({ code: 'options_invalid' });
      await expect(inbox.list({ status: 'nope' as 'dead' })).rejects.toMatchObject({
        code: 'options_invalid',
      });
    });
  });
}

/** A receiver stand-in whose runs only claim (the takeover above needs no handler). */
function stub() {
  return {
    service: 'crm',
    leaseMs: 30_000,
    runJob: async () => ({ kind: 'failed', code: 'handler_failed', service: 'crm' }) as never,
    reportJobError: () => {},
  };
}

forEachInboxDatabase(suite);
