/**
 * A SQLite inbox worker in the receiving process never makes the process wait on SQLite's lock
 * (src/inbox/write-turns.ts), on a real SQLite file with the documented setup
 * (`sqliteTransactions` on a connection of its own). Orders of events, no clocks:
 * - a receipt arriving while a row's transaction holds the write lock is written right after that
 *   row, before the next row of the same drain runs (not after the batch);
 * - the worker gives the event loop a turn between rows, even when handlers never wait;
 * - mail's and CRM's workers on one file take turns: with a busy timeout of 0 on both app
 *   connections (any overlap fails at once with SQLITE_BUSY) every row is handled on its first
 *   attempt and no two transactions are ever open together.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createInboxWorker, sqliteTransactions } from '@svc/webhooks/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { queueOf } from '../../src/inbox/inbox.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { openRawSqlite, type RawSqlite } from '../support/sqlite.js';
import { sqliteDatabase, uniqueTable } from './support.js';

const quiet = () => {};

describe('a SQLite inbox worker takes turns with the receipts and the other workers', () => {
  const db = sqliteDatabase();
  const connections: RawSqlite[] = [];
  afterAll(async () => {
    for (const connection of connections) connection.close();
    await db.close();
  });
  /** A connection of the worker's own, as docs/inbox.md says, waiting `busyMs` for a lock. */
  const appConnection = (busyMs: number) => {
    const connection = openRawSqlite(db.path);
    connection.exec(`PRAGMA busy_timeout = ${busyMs}`);
    connections.push(connection);
    return connection;
  };

  it('a receipt that meets a row’s open transaction is written before the next row runs', async () => {
    const table = uniqueTable('turns');
    const inbox = db.inbox({ table });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
    const late = mailDelivery('delivered', { messageId: 'msg_late' });
    // Resolves when the receipt's INSERT reaches the inbox's connection.
    let reached!: () => void;
    const insertReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    // The receipt's INSERT is a `write` (its count of rows, no RETURNING); any other insert a `query`.
    const { db: connection } = queueOf(inbox);
    const { query, write } = connection;
    const watch = (text: string, params: readonly unknown[]) => {
      if (text.startsWith('INSERT') && params.includes(late.deliveryId)) reached();
    };
    Object.assign(connection, {
      query: (text: string, params: readonly unknown[], timeoutMs?: number) => {
        watch(text, params);
        return query.call(connection, text, params, timeoutMs);
      },
      write: (text: string, params: readonly unknown[], timeoutMs?: number) => {
        watch(text, params);
        return write!.call(connection, text, params, timeoutMs);
      },
    });
    const events: string[] = [];
    let ack: Promise<number> | undefined;
    receiver.on('delivered', async (event, context) => {
      const messageId = event.payload.message_id;
      const [seen] = (context.tx as RawSqlite)
        .prepare(`SELECT count(*) AS n FROM ${table} WHERE delivery_id = ?`)
        .all(late.deliveryId) as { n: number | bigint }[];
      events.push(`${messageId}${Number(seen!.n) === 1 ? ' (late row written)' : ''}`);
      if (messageId === 'msg_0') {
        ack = deliver(receiver, late).then((answer) => {
          events.push('late acknowledged');
          return answer.status;
        });
        await insertReached; // the receipt now waits for this row's write lock
      }
    });
    for (let i = 0; i < 3; i++)
      expect((await deliver(receiver, mailDelivery('delivered', { messageId: `msg_${i}` }))).status).toBe(
        200,
      );

    const worker = createInboxWorker({
      receiver,
      inbox,
      transactions: sqliteTransactions(appConnection(2_000)),
    });
    expect(await worker.runOnce()).toBe(4);
    expect(await ack).toBe(200);
    expect(events).toEqual([
      'msg_0',
      'late acknowledged',
      'msg_1 (late row written)',
      'msg_2 (late row written)',
      'msg_late (late row written)',
    ]);
  });

  it('gives the event loop a turn between rows whose handlers never wait', async () => {
    const table = uniqueTable('turns_io');
    const inbox = db.inbox({ table });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
    const events: string[] = [];
    receiver.on('delivered', (event) => {
      events.push(event.payload.message_id);
      // I/O of the process (an incoming request's callback) in the next turn of the event loop.
      setImmediate(() => events.push(`io after ${event.payload.message_id}`));
    });
    for (let i = 0; i < 3; i++)
      expect((await deliver(receiver, mailDelivery('delivered', { messageId: `m${i}` }))).status).toBe(200);
    const worker = createInboxWorker({
      receiver,
      inbox,
      transactions: sqliteTransactions(appConnection(2_000)),
    });
    expect(await worker.runOnce()).toBe(3);
    await turn();
    expect(events).toEqual(['m0', 'io after m0', 'm1', 'io after m1', 'm2', 'io after m2']);
  });

  it('mail’s and CRM’s workers on one file never hold the write lock together', async () => {
    const table = uniqueTable('turns_two');
    const mailInbox = db.inbox({ table });
    await mailInbox.migrate();
    const crmInbox = db.inbox({ table }); // a second inbox on the same file: the same turns
    const mail = createMailReceiver({ secret: MAIL_SECRET, handoff: mailInbox, logger: quiet });
    const crm = createCrmReceiver({ secret: CRM_SECRET, handoff: crmInbox, logger: quiet });
    let open = 0;
    let most = 0;
    const run = async () => {
      most = Math.max(most, ++open);
      await turn(); // the transaction stays open across turns of the event loop
      await turn();
      open--;
    };
    mail.on('delivered', run);
    crm.on('deal.won', run);
    for (let i = 0; i < 6; i++) {
      expect((await deliver(mail, mailDelivery('delivered', { messageId: `mm${i}` }))).status).toBe(200);
      expect(
        (await deliver(crm, crmDelivery('deal.won', { data: { deal_id: `d${i}`, title: 't', value: 1 } })))
          .status,
      ).toBe(200);
    }
    // busy_timeout 0: a BEGIN IMMEDIATE meeting the other worker's open transaction fails at once.
    const workers = [
      createInboxWorker({
        receiver: mail,
        inbox: mailInbox,
        transactions: sqliteTransactions(appConnection(0)),
      }),
      createInboxWorker({
        receiver: crm,
        inbox: crmInbox,
        transactions: sqliteTransactions(appConnection(0)),
      }),
    ];
    expect(await Promise.all(workers.map((worker) => worker.runOnce()))).toEqual([6, 6]);
    expect(most).toBe(1);
    const rows = (await mailInbox.list({ limit: 20 })).rows;
    expect(rows.map((row) => [row.status, row.attempts])).toEqual(Array(12).fill(['handled', 1]));
    await crmInbox.close();
  });
});
