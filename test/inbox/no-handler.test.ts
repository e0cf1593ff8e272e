/**
 * A row whose event has no handler in the worker's receiver (a handler removed, a worker deployed
 * before the one that registers it), on real PostgreSQL and a real SQLite file: the run ends at once
 * with `dead` and `no_handler` (to re-drive after the deploy that registers one), without taking the
 * row as its claim, so the run never waits on a claim nothing will settle; a row of an event with a
 * handler runs as usual beside it.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type DatabaseSuite, forEachInboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};

const suite: DatabaseSuite = (name, open, close) => {
  describe(`a row without a handler in the worker, on ${name}`, () => {
    const database = openedInboxDatabase(open, close);

    it('is dead with no_handler at once; a row with a handler beside it is handled', async () => {
      const inbox = database().inbox({ table: uniqueTable('nohandler') });
      await inbox.migrate();
      // The receiving side hands every event off: the workers' registrations decide.
      const receiving = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
      expect((await deliver(receiving, mailDelivery('bounced', { deliveryId: 'dlv_nh_1' }))).status).toBe(
        200,
      );
      expect((await deliver(receiving, mailDelivery('delivered', { deliveryId: 'dlv_nh_2' }))).status).toBe(
        200,
      );
      const ran: string[] = [];
      const working = createMailReceiver({ secret: MAIL_SECRET, logger: quiet }).on('delivered', (event) => {
        ran.push(event.deliveryId);
      });
      expect(await createInboxWorker({ receiver: working, inbox }).runOnce()).toBe(2);
      const { rows } = await inbox.list();
      const byId = Object.fromEntries(rows.map((row) => [row.deliveryId, [row.status, row.lastErrorCode]]));
      expect(byId).toEqual({ dlv_nh_1: ['dead', 'no_handler'], dlv_nh_2: ['handled', null] });
      expect(ran).toEqual(['dlv_nh_2']);
    });
  });
};

forEachInboxDatabase(suite);
