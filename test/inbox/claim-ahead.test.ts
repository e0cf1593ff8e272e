/**
 * The worker claims up to 16 rows ahead of its free slots, each under its own lease and fence: a
 * waiting row whose lease is past its half is extended before it runs, one whose fence moved on (its
 * lease ended and another claim took it) never runs here, and `stop()` puts the waiting rows back as
 * the claim found them for any worker. Real PostgreSQL and SQLite, a virtual clock.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/sqlite';
import { describe, expect, it } from 'vitest';
import { queueOf } from '../../src/inbox/inbox.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { forEachInboxDatabase, openedInboxDatabase, uniqueTable } from './support.js';

const quiet = () => {};
const LEASE_MS = 10_000;

/** A promise the test opens when it chooses. */
function opening(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

forEachInboxDatabase((name, open, close) => {
  describe(`claiming ahead (${name})`, () => {
    const opened = openedInboxDatabase(open, close);

    /** An inbox and receiver on a fresh table with `count` rows of their own keys (`m_0` …). */
    async function rows(count: number, clock: { now(): number }) {
      const table = uniqueTable('ahead');
      const inbox = opened().inbox({ table, clock });
      await inbox.migrate();
      const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet, clock });
      for (let i = 0; i < count; i++)
        expect((await deliver(receiver, mailDelivery('delivered', { messageId: `m_${i}` }))).status).toBe(
          200,
        );
      const status = async () =>
        (await opened().sql(`SELECT id, status, attempts, fence FROM ${table} ORDER BY id`)).map((row) => ({
          id: Number(row.id),
          status: row.status,
          attempts: Number(row.attempts),
          fence: Number(row.fence),
        }));
      return { table, inbox, receiver, status };
    }

    it('stop() puts the rows claimed ahead back, their attempt refunded; another worker runs them', async () => {
      const now = 1_000_000;
      const { inbox, receiver, status } = await rows(4, { now: () => now });
      const entered = opening();
      const gate = opening();
      const ran: string[] = [];
      receiver.on('delivered', async (event) => {
        ran.push(event.payload.message_id);
        entered.open();
        await gate.opened;
      });
      const worker = createInboxWorker({ receiver, inbox, leaseMs: LEASE_MS, pollMs: 60_000 });
      worker.start();
      await entered.opened;
      // One row runs; the claim took the other three ahead of the one slot.
      expect((await status()).map((row) => row.status)).toEqual([
        'processing',
        'processing',
        'processing',
        'processing',
      ]);
      const stopped = worker.stop();
      gate.open();
      await stopped;
      expect(await status()).toEqual([
        { id: 1, status: 'handled', attempts: 1, fence: 1 },
        { id: 2, status: 'received', attempts: 0, fence: 1 },
        { id: 3, status: 'received', attempts: 0, fence: 1 },
        { id: 4, status: 'received', attempts: 0, fence: 1 },
      ]);
      expect(await createInboxWorker({ receiver, inbox, leaseMs: LEASE_MS }).runOnce()).toBe(3);
      expect(ran).toEqual(['m_0', 'm_1', 'm_2', 'm_3']);
      expect((await inbox.stats()).rows.handled).toBe(4);
      await inbox.close();
    });

    it('a row waiting past half its lease is extended before it runs; one another claim took never runs here', async () => {
      let now = 1_000_000;
      const { table, inbox, receiver, status } = await rows(3, { now: () => now });
      const ran: string[] = [];
      receiver.on('delivered', async (event) => {
        ran.push(event.payload.message_id);
        if (event.payload.message_id !== 'm_0') return;
        // While the first row runs: the waiting rows' leases pass their half, and row 2 is taken
        // by another claim (its fence raised, as a claim after its lease ended would).
        now += LEASE_MS * 0.6;
        await opened().sql(`UPDATE ${table} SET fence = fence + 1 WHERE id = 2`);
      });
      const { db } = queueOf(inbox);
      const texts: string[] = [];
      const query = db.query;
      Object.assign(db, {
        query: (text: string, params: readonly unknown[]) => {
          texts.push(text);
          return query.call(db, text, params);
        },
      });
      expect(await createInboxWorker({ receiver, inbox, leaseMs: LEASE_MS }).runOnce()).toBe(2);
      expect(ran).toEqual(['m_0', 'm_2']);
      // Two extensions tried (rows 2 and 3), only row 3's held.
      expect(texts.filter((text) => text === queueOf(inbox).statements.extend)).toHaveLength(2);
      expect(await status()).toEqual([
        { id: 1, status: 'handled', attempts: 1, fence: 1 },
        { id: 2, status: 'processing', attempts: 1, fence: 2 },
        { id: 3, status: 'handled', attempts: 1, fence: 1 },
      ]);
      await inbox.close();
    });
  });
});
