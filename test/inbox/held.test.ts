/**
 * `inbox.held(service, deliveryIds)` on real PostgreSQL and a real SQLite file: which deliveries have
 * a row, whatever its status, found by the 'delivery-id' dedup key or, for another key, by the row's
 * delivery id; never another service's.
 */
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { forEachInboxDatabase, type InboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

function suite(name: string, open: () => Promise<InboxDatabase>, close: () => Promise<void>) {
  describe(`inbox.held on ${name}`, () => {
    const opened = openedInboxDatabase(open, close);

    it('names the held ids among those asked, by key or by delivery id, per service', async () => {
      const inbox = opened().inbox({ table: uniqueTable() });
      await inbox.migrate();
      const mail = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: false }).onAny(() => {});
      const byMessage = createMailReceiver({
        secret: MAIL_SECRET,
        handoff: inbox,
        dedupKey: 'message-event',
        logger: false,
      }).onAny(() => {});
      const crm = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: false }).onAny(() => {});
      const a = mailDelivery('bounced');
      const b = mailDelivery('opened', { messageId: 'msg_held' });
      const c = crmDelivery('deal.won');
      for (const [receiver, delivery] of [
        [mail, a],
        [byMessage, b],
        [crm, c],
      ] as const)
        expect((await deliver(receiver, delivery)).status).toBe(200);
      // 60 ids asked: more than one statement's worth.
      const absent = Array.from({ length: 57 }, (_, i) => `dlv_absent_${i}`);
      const asked = [a.deliveryId, ...absent, b.deliveryId, c.deliveryId, a.deliveryId];
      expect([...(await inbox.held('mail', asked))].sort()).toEqual([a.deliveryId, b.deliveryId].sort());
      expect([...(await inbox.held('crm', asked))]).toEqual([c.deliveryId]);
      expect(await inbox.held('mail', [])).toEqual(new Set());
      expect(await inbox.held('mail', ['with\u0000nul'])).toEqual(new Set());
    });
  });
}

forEachInboxDatabase(suite);
