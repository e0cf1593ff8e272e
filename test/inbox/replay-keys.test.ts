/**
 * Every row keyed by the receiver's strategy (docs/security.md "Replay with fresh ids"), on real
 * PostgreSQL and a real SQLite file, with `dedupKey: 'message-event'`: one captured body that fails
 * the schema, sent under 20 fresh delivery ids, is one quarantined row; 5 invented event names × 10
 * fresh ids of one captured body are no row at all without an `onUnknown` handler (acknowledged as
 * `ignored`, as without the inbox), and one row per name with one, each run once: never a dead row.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { describe, expect, it } from 'vitest';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type DatabaseSuite, forEachInboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};

const suite: DatabaseSuite = (name, open, close) => {
  describe(`replays under fresh ids on ${name}`, () => {
    const database = openedInboxDatabase(open, close);

    async function setup() {
      const inbox = database().inbox({ table: uniqueTable('replay') });
      await inbox.migrate();
      const receiver = createMailReceiver({
        secret: MAIL_SECRET,
        handoff: inbox,
        dedupKey: 'message-event',
        logger: quiet,
      });
      const deadLetters: string[] = [];
      receiver.onError((error) => void deadLetters.push(String((error as { code?: string }).code)));
      return { inbox, receiver, deadLetters };
    }

    it('one captured body that fails the schema, sent under 20 fresh ids, is one quarantined row', async () => {
      const { inbox, receiver } = await setup();
      // A `bounced` without `provider`: authentic, but not what the schema accepts.
      const payload = { event: 'bounced', client_id: 'c_1', message_id: 'msg_q', to: 'ana@example.com' };
      const kinds: string[] = [];
      for (let i = 0; i < 20; i++) {
        const answer = await deliver(
          receiver,
          mailDelivery('bounced', { deliveryId: `dlv_fresh_${i}`, payload }),
        );
        expect(answer.status).toBe(200);
        kinds.push(answer.kind);
      }
      expect(kinds.filter((kind) => kind === 'duplicate')).toHaveLength(19);
      const { rows } = await inbox.list();
      expect(rows.map((r) => [r.status, r.dedupKey, r.deliveryId])).toEqual([
        ['quarantined', 'mail:message:bounced:msg_q', 'dlv_fresh_0'],
      ]);
    });

    it('5 invented event names × 10 fresh ids: no row without onUnknown; one row per name with it, run once each, none dead', async () => {
      // A captured body without its own `event` (the header names it, email-service §6).
      const payload = { client_id: 'c_1', message_id: 'msg_u', to: 'ana@example.com' };
      const names = ['made.up', 'refunded', 'hijacked', 'x_event', 'unsubscribe_all'];
      const sendAll = async (receiver: Parameters<typeof deliver>[0]) => {
        const kinds: string[] = [];
        for (const name of names)
          for (let i = 0; i < 10; i++) {
            const answer = await deliver(
              receiver,
              mailDelivery(name, { deliveryId: `dlv_${name}_${i}`, payload }),
            );
            expect(answer.status).toBe(200);
            kinds.push(answer.kind);
          }
        return kinds;
      };

      const without = await setup();
      expect(new Set(await sendAll(without.receiver))).toEqual(new Set(['ignored']));
      expect((await without.inbox.list()).rows).toEqual([]);
      expect(await createInboxWorker({ receiver: without.receiver, inbox: without.inbox }).runOnce()).toBe(0);

      const withUnknown = await setup();
      const ran: string[] = [];
      withUnknown.receiver.onUnknown((event) => void ran.push(event.name));
      const kinds = await sendAll(withUnknown.receiver);
      expect(kinds.filter((kind) => kind === 'queued')).toHaveLength(5);
      expect(kinds.filter((kind) => kind === 'duplicate')).toHaveLength(45);
      const { rows } = await withUnknown.inbox.list();
      expect(rows.map((r) => r.dedupKey).sort()).toEqual(names.map((n) => `mail:message:${n}:msg_u`).sort());
      const worker = createInboxWorker({ receiver: withUnknown.receiver, inbox: withUnknown.inbox });
      expect(await worker.runOnce()).toBe(5);
      expect(ran.sort()).toEqual([...names].sort());
      const stats = await withUnknown.inbox.stats();
      expect(stats.rows).toMatchObject({ handled: 5, dead: 0 });
      expect([...without.deadLetters, ...withUnknown.deadLetters]).toEqual([]);
    });
  });
};

forEachInboxDatabase(suite);
