/**
 * Direct mode of the database inbox on real PostgreSQL and a real SQLite file: the receiver inserts the
 * row and runs the handlers in the request, in the app's transaction, with the row's claim and its move
 * to `handled`; a failure rolls both back and answers a retryable status, and the retry runs it again.
 * Each handler writes one row to a business table with no unique constraint: a second committed run
 * would show as a second row.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCrmReceiver, createMailReceiver, type Outcome } from '@svc/webhooks';
import { createDirectInbox, createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import {
  CRM_SECRET,
  crmDelivery,
  type Delivery,
  deliver,
  MAIL_SECRET,
  mailDelivery,
  RETRY_INVITING,
  sign,
} from '../receivers/support.js';
import { forEachInboxDatabase, type InboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};

/** A signed CRM deal event at `timestamp` (the stale guard reads it). */
function dealEvent(event: string, timestamp: string, data: Record<string, unknown>): Delivery {
  const deliveryId = randomUUID();
  const text = JSON.stringify({ id: deliveryId, event, timestamp, tenant_id: 't_1', data });
  return {
    body: new TextEncoder().encode(text),
    headers: {
      'content-type': 'application/json',
      'x-svc-event': event,
      'x-svc-delivery': deliveryId,
      'x-svc-signature': sign(text, CRM_SECRET),
    },
    deliveryId,
  };
}

function suite(name: string, open: () => Promise<InboxDatabase>, close: () => Promise<void>) {
  describe(`direct mode on ${name}`, () => {
    const opened = openedInboxDatabase(open, close);

    async function setup(
      options: {
        handle?: (deliveryId: string, attempt: number) => Promise<void>;
        timeoutMs?: number;
        maxAttempts?: number;
      } = {},
    ) {
      const table = uniqueTable('direct');
      const business = uniqueTable('business');
      // No unique constraint: a second committed run of a handler would show as a second row.
      await opened().sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      const outcomes: Outcome[] = [];
      const handoff = createDirectInbox({
        inbox,
        transactions: opened().transactions(),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
      });
      const receiver = createCrmReceiver({
        secret: CRM_SECRET,
        handoff,
        logger: quiet,
        onOutcome: (outcome) => outcomes.push(outcome),
      });
      const runs: string[] = [];
      receiver.on(['deal.won', 'deal.stage_changed'], async (event, context) => {
        runs.push(event.deliveryId);
        await opened().insertBusiness(context.tx, business, event.deliveryId);
        await options.handle?.(event.deliveryId, context.attempt ?? 0);
      });
      const businessRows = async () =>
        (await opened().sql(`SELECT delivery_id FROM ${business} ORDER BY delivery_id`)).map((r) =>
          String(r.delivery_id),
        );
      const rowOf = async (deliveryId: string) =>
        (
          await opened().sql(
            `SELECT status, attempts, last_error_code FROM ${table} WHERE delivery_id = '${deliveryId}'`,
          )
        )[0];
      return { table, inbox, receiver, runs, businessRows, rowOf, outcomes, handoff };
    }

    it('answers 200 once the handler’s writes and the row’s move to handled committed; a copy is a duplicate', async () => {
      const { receiver, businessRows, rowOf, outcomes, runs } = await setup();
      const a = crmDelivery('deal.won');
      const first = await deliver(receiver, a);
      expect([first.status, first.kind]).toEqual([200, 'handled']);
      expect(await rowOf(a.deliveryId)).toMatchObject({ status: 'handled' });
      expect(Number((await rowOf(a.deliveryId))!.attempts)).toBe(1);
      const copy = await deliver(receiver, a);
      expect([copy.status, copy.kind]).toEqual([200, 'duplicate']);
      expect(await businessRows()).toEqual([a.deliveryId]);
      expect(runs).toEqual([a.deliveryId]);
      // One outcome per request, as in direct mode without an inbox.
      expect(outcomes.map((o) => [o.mode, o.kind])).toEqual([
        ['direct', 'handled'],
        ['direct', 'duplicate'],
      ]);
    });

    it('a failing handler rolls its writes back, leaves the row failed with the error, answers 500; the retry runs it once', async () => {
      const { receiver, businessRows, rowOf, runs } = await setup({
        handle: async (_id, attempt) => {
          if (attempt === 1) throw new Error('downstream refused');
        },
      });
      const a = crmDelivery('deal.won');
      const first = await deliver(receiver, a);
      expect(RETRY_INVITING.has(first.status)).toBe(true);
      expect(first.code).toBe('handler_failed');
      expect(await businessRows()).toEqual([]);
      expect(await rowOf(a.deliveryId)).toMatchObject({
        status: 'failed',
        last_error_code: 'handler_failed',
      });
      const retry = await deliver(receiver, a);
      expect([retry.status, retry.kind]).toEqual([200, 'handled']);
      expect(await businessRows()).toEqual([a.deliveryId]);
      expect(runs).toEqual([a.deliveryId, a.deliveryId]);
      expect(await rowOf(a.deliveryId)).toMatchObject({ status: 'handled', last_error_code: null });
      expect(Number((await rowOf(a.deliveryId))!.attempts)).toBe(2);
    });

    it('exactly once under concurrent copies and retries: one business row per delivery', async () => {
      let calls = 0;
      const { receiver, businessRows, rowOf } = await setup({
        handle: async () => {
          await sleep(5 + (calls % 7) * 3);
          // Every third run fails after its write: the write rolls back and the sender retries.
          if (++calls % 3 === 0) throw new Error('flaky downstream');
        },
      });
      const deliveries = Array.from({ length: 20 }, (_, i) =>
        crmDelivery('deal.won', { data: { deal_id: `d_${i}`, title: 'Deal', value: i } }),
      );
      const statuses = new Map<number, number>();
      // Each delivery arrives as 3 concurrent copies; non-2xx copies are retried until one is 2xx.
      await Promise.all(
        deliveries.map(async (d) => {
          for (let round = 0; round < 20; round++) {
            const answers = await Promise.all([1, 2, 3].map(() => deliver(receiver, d)));
            for (const a of answers) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
            if (answers.some((a) => a.status === 200)) return;
            await sleep(20);
          }
          throw new Error(`delivery ${d.deliveryId} never acknowledged`);
        }),
      );
      const rows = await businessRows();
      expect(rows).toEqual(deliveries.map((d) => d.deliveryId).sort());
      for (const d of deliveries) expect((await rowOf(d.deliveryId))!.status).toBe('handled');
      // Every non-2xx answer invited a retry.
      for (const status of statuses.keys()) expect(status === 200 || RETRY_INVITING.has(status)).toBe(true);
      expect(statuses.get(500)).toBeGreaterThan(0);
    });

    it('the stale guard: an event older than one of its deal already handled is superseded, answered 200, never run', async () => {
      const { receiver, businessRows, rowOf, runs } = await setup();
      const won = dealEvent('deal.won', '2024-05-01T10:00:05.000Z', { deal_id: 'd_9', title: 'T', value: 1 });
      const stage = dealEvent('deal.stage_changed', '2024-05-01T10:00:01.000Z', {
        deal_id: 'd_9',
        title: 'T',
        stage_id: 's_2',
      });
      expect((await deliver(receiver, won)).kind).toBe('handled');
      const late = await deliver(receiver, stage);
      expect([late.status, late.kind]).toEqual([200, 'ignored']);
      expect(await rowOf(stage.deliveryId)).toMatchObject({ status: 'superseded' });
      expect(runs).toEqual([won.deliveryId]);
      expect(await businessRows()).toEqual([won.deliveryId]);
      // A newer event of the same deal runs.
      const newer = dealEvent('deal.stage_changed', '2024-05-01T10:00:09.000Z', {
        deal_id: 'd_9',
        title: 'T',
        stage_id: 's_3',
      });
      expect((await deliver(receiver, newer)).kind).toBe('handled');
    });

    it('past the budget: 503 handler_timeout at once; the transaction waits for the handler and commits its success', async () => {
      const release = { fn: () => {} };
      const { receiver, businessRows, rowOf } = await setup({
        timeoutMs: 150,
        handle: () => new Promise<void>((resolve) => (release.fn = resolve)),
      });
      const a = crmDelivery('deal.won');
      const first = await deliver(receiver, a);
      expect([first.status, first.code]).toEqual([503, 'handler_timeout']);
      // The handler still holds the transaction: nothing of it is committed yet.
      expect(await businessRows()).toEqual([]);
      expect((await rowOf(a.deliveryId))!.status).toBe('received');
      if (opened().name === 'postgres') {
        // A retry meanwhile finds the row held: in progress, retry later (409).
        const meanwhile = await deliver(receiver, a);
        expect([meanwhile.status, meanwhile.code]).toEqual([409, 'delivery_in_progress']);
      }
      release.fn();
      const deadline = Date.now() + 5_000;
      while ((await rowOf(a.deliveryId))!.status !== 'handled' && Date.now() < deadline) await sleep(10);
      expect(await businessRows()).toEqual([a.deliveryId]);
      const retry = await deliver(receiver, a);
      expect([retry.status, retry.kind]).toEqual([200, 'duplicate']);
      expect(await businessRows()).toEqual([a.deliveryId]);
    });

    it('past the budget, a handler that then fails rolls back: the row is failed, the retry runs it once', async () => {
      const release = { fn: (_error: Error) => {} };
      let first = true;
      const { receiver, businessRows, rowOf } = await setup({
        timeoutMs: 150,
        handle: () => {
          if (!first) return Promise.resolve();
          first = false;
          return new Promise<void>((_resolve, reject) => (release.fn = reject));
        },
      });
      const a = crmDelivery('deal.won');
      expect((await deliver(receiver, a)).code).toBe('handler_timeout');
      release.fn(new Error('late failure'));
      const deadline = Date.now() + 5_000;
      while ((await rowOf(a.deliveryId))!.status !== 'failed' && Date.now() < deadline) await sleep(10);
      expect(await rowOf(a.deliveryId)).toMatchObject({
        status: 'failed',
        last_error_code: 'handler_timeout',
      });
      expect(await businessRows()).toEqual([]);
      expect((await deliver(receiver, a)).kind).toBe('handled');
      expect(await businessRows()).toEqual([a.deliveryId]);
    });

    it('after maxAttempts the row is dead and answered 200 (kept to re-drive); an inbox worker runs the re-driven row', async () => {
      let failing = true;
      const { receiver, inbox, businessRows, rowOf } = await setup({
        maxAttempts: 2,
        handle: async () => {
          if (failing) throw new Error('always');
        },
      });
      const a = crmDelivery('deal.won');
      expect((await deliver(receiver, a)).status).toBe(500);
      const last = await deliver(receiver, a);
      expect([last.status, last.kind]).toEqual([200, 'ignored']);
      expect(await rowOf(a.deliveryId)).toMatchObject({ status: 'dead', last_error_code: 'handler_failed' });
      expect((await deliver(receiver, a)).kind).toBe('duplicate');
      failing = false;
      expect(await inbox.redrive({ status: 'dead' })).toBe(1);
      const worker = createInboxWorker({ receiver, inbox, transactions: opened().transactions() });
      expect(await worker.runOnce()).toBe(1);
      expect(await businessRows()).toEqual([a.deliveryId]);
    });

    it('the inbox worker shares the run: a handler past its budget keeps the transaction, its late write commits once', async () => {
      const table = uniqueTable('worker_late');
      const business = uniqueTable('business');
      await opened().sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      // runJob's budget is the receiver's leaseMs minus 1 s: 500 ms here.
      const receiver = createCrmReceiver({
        secret: CRM_SECRET,
        handoff: inbox,
        logger: quiet,
        leaseMs: 1_500,
        timeoutMs: 1_000,
      });
      receiver.on('deal.won', async (event, context) => {
        await sleep(800);
        await opened().insertBusiness(context.tx, business, event.deliveryId);
      });
      const a = crmDelivery('deal.won');
      expect((await deliver(receiver, a)).status).toBe(200);
      const worker = createInboxWorker({
        receiver,
        inbox,
        transactions: opened().transactions(),
        leaseMs: 1_500,
      });
      await worker.runOnce();
      await worker.runOnce();
      const rows = await opened().sql(`SELECT delivery_id FROM ${business}`);
      expect(rows.map((r) => String(r.delivery_id))).toEqual([a.deliveryId]);
      const [row] = (await inbox.list()).rows;
      expect(row!.status).toBe('handled');
    });

    it('quarantines an authentic delivery that fails the schema, as inbox mode does', async () => {
      const table = uniqueTable('direct_q');
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      const receiver = createMailReceiver({
        secret: MAIL_SECRET,
        handoff: createDirectInbox({ inbox, transactions: opened().transactions() }),
        logger: quiet,
      }).on('bounced', () => {});
      const bad = mailDelivery('bounced', { payload: { provider: undefined } });
      const answer = await deliver(receiver, bad);
      expect(answer.status).toBe(200);
      const { rows } = await inbox.list({ status: 'quarantined' });
      expect(rows.map((r) => r.lastErrorCode)).toEqual(['invalid_payload']);
    });

    it('refuses options it cannot run with', () => {
      const inbox = opened().inbox({ table: uniqueTable('direct_o') });
      expect(() => createDirectInbox({ inbox, transactions: undefined as never })).toThrow(/transactions/);
      expect(() => createDirectInbox({ inbox, transactions: opened().transactions(), timeoutMs: 0 })).toThrow(
        /timeoutMs/,
      );
      expect(() => createDirectInbox({ inbox: {} as never, transactions: opened().transactions() })).toThrow(
        /createPostgresInbox/,
      );
    });
  });
}

forEachInboxDatabase(suite);
