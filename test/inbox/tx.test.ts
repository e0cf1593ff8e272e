/**
 * `worker.tx(context)` and `direct.tx(context)` on real PostgreSQL and a real SQLite file: in a
 * handler run in the adapter's transaction it is that transaction (a write through it commits with the
 * row), and any other context is refused with `options_invalid`: a worker without an adapter, another
 * adapter, a receiver running the delivery itself, a context kept after its handler, no context.
 */
import { createCrmReceiver, type HandlerContext, isWebhookError } from '@svc/webhooks';
import { createDirectInbox, createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { forEachInboxDatabase, type InboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};

/** What `call` threw: its code and message, or `undefined` when it returned. */
function refusal(call: () => unknown): { code: string; message: string } | undefined {
  try {
    call();
    return undefined;
  } catch (error) {
    if (!isWebhookError(error)) throw error;
    return { code: error.code, message: error.message };
  }
}

function suite(name: string, open: () => Promise<InboxDatabase>, close: () => Promise<void>) {
  describe(`tx(context) on ${name}`, () => {
    const opened = openedInboxDatabase(open, close);

    async function tables() {
      const table = uniqueTable();
      const business = uniqueTable('business');
      await opened().sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
      const inbox = opened().inbox({ table });
      await inbox.migrate();
      const businessRows = async () =>
        (await opened().sql(`SELECT delivery_id FROM ${business}`)).map((r) => String(r.delivery_id));
      return { inbox, business, businessRows };
    }

    it("the worker's tx(context) is the handler's open transaction; a write through it commits with the row", async () => {
      const { inbox, business, businessRows } = await tables();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet });
      const transactions = opened().transactions();
      const worker = createInboxWorker({ receiver, inbox, transactions });
      const other = createInboxWorker({ receiver, inbox, transactions: opened().transactions() });
      const bare = createInboxWorker({ receiver, inbox });
      const seen: { same: boolean; other?: string; bare?: string }[] = [];
      let kept: HandlerContext | undefined;
      receiver.on('deal.won', async (event, context) => {
        kept = context;
        const tx = worker.tx(context);
        seen.push({
          same: tx === context.tx && tx !== undefined,
          other: refusal(() => other.tx(context))?.code,
          bare: refusal(() => bare.tx(context))?.code,
        });
        await opened().insertBusiness(tx, business, event.deliveryId);
      });
      const delivery = crmDelivery('deal.won');
      expect((await deliver(receiver, delivery)).status).toBe(200);
      expect(await worker.runOnce()).toBe(1);
      expect(seen).toEqual([{ same: true, other: 'options_invalid', bare: 'options_invalid' }]);
      expect(await businessRows()).toEqual([delivery.deliveryId]);
      expect((await inbox.list({ status: 'handled' })).rows).toHaveLength(1);
      // The run is over: its context no longer reads a transaction.
      expect(refusal(() => worker.tx(kept!))).toEqual({
        code: 'options_invalid',
        message: expect.stringMatching(/^inbox worker\.tx\(context\): the context is not that of a handler/),
      });
      expect(refusal(() => worker.tx({} as HandlerContext))?.code).toBe('options_invalid');
      expect(refusal(() => worker.tx(undefined as never))?.code).toBe('options_invalid');
    });

    it('a worker without an adapter refuses in a handler: the run fails with the refusal, nothing completes', async () => {
      const { inbox } = await tables();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: quiet });
      const worker = createInboxWorker({ receiver, inbox, maxAttempts: 1 });
      receiver.on('deal.won', (_event, context) => {
        worker.tx(context);
      });
      await deliver(receiver, crmDelivery('deal.won'));
      expect(await worker.runOnce()).toBe(1);
      const [dead] = (await inbox.list({ status: 'dead' })).rows;
      expect(dead).toMatchObject({
        lastErrorCode: 'handler_failed',
        lastErrorMessage: expect.stringContaining(
          'inbox worker.tx(context): this inbox worker has no `transactions` adapter. See docs/inbox.md.',
        ),
      });
    });

    it("direct mode's tx(context) is the request's open transaction; a receiver without the inbox is refused", async () => {
      const { inbox, business, businessRows } = await tables();
      const transactions = opened().transactions();
      const direct = createDirectInbox({ inbox, transactions });
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: direct, logger: quiet });
      // A worker on the same adapter reads the same runs.
      const worker = createInboxWorker({ receiver, inbox, transactions });
      const seen: { same: boolean; worker: boolean }[] = [];
      receiver.on('deal.won', async (event, context) => {
        const tx = direct.tx(context);
        seen.push({ same: tx === context.tx && tx !== undefined, worker: worker.tx(context) === tx });
        await opened().insertBusiness(tx, business, event.deliveryId);
      });
      const delivery = crmDelivery('deal.won');
      expect((await deliver(receiver, delivery)).status).toBe(200);
      expect(seen).toEqual([{ same: true, worker: true }]);
      expect(await businessRows()).toEqual([delivery.deliveryId]);

      // The same handler on a receiver with its memory store: no transaction to give.
      const memory = createCrmReceiver({ secret: CRM_SECRET, logger: quiet });
      const problems: (string | undefined)[] = [];
      memory.on('deal.won', (_event, context) => {
        problems.push(refusal(() => direct.tx(context))?.message);
      });
      expect((await deliver(memory, crmDelivery('deal.won'))).status).toBe(200);
      expect(problems).toEqual([expect.stringMatching(/^direct inbox\.tx\(context\): the context is not/)]);
    });
  });
}

forEachInboxDatabase(suite);
