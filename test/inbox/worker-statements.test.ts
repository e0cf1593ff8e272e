/**
 * The statements a worker sends on the inbox's own connection (no transaction adapter) are a fixed
 * set, whatever the number of rows: the completion is one parameterised statement. An inlined text
 * per row was prepared anew for each row, and the SQLite connection's statement cache kept every one
 * of them (memory growing with every row run). Real SQLite file.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { queueOf } from '../../src/inbox/inbox.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { sqliteDatabase, uniqueTable } from './support.js';

const quiet = () => {};

describe('the inbox worker without transactions', () => {
  const db = sqliteDatabase();
  afterAll(() => db.close());

  it('runs 30 rows with the same two statement texts (claim, completion)', async () => {
    const inbox = db.inbox({ table: uniqueTable('statements') });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
    const handled: string[] = [];
    receiver.on('delivered', (event) => {
      handled.push(event.deliveryId);
    });
    for (let i = 0; i < 30; i++)
      expect((await deliver(receiver, mailDelivery('delivered', { messageId: `msg_${i}` }))).status).toBe(
        200,
      );
    const { db: connection } = queueOf(inbox);
    const texts = new Set<string>();
    const query = connection.query;
    Object.assign(connection, {
      query: (text: string, params: readonly unknown[]) => {
        texts.add(text);
        return query.call(connection, text, params);
      },
    });
    expect(await createInboxWorker({ receiver, inbox, concurrency: 4 }).runOnce()).toBe(30);
    expect(new Set(handled).size).toBe(30);
    expect(texts.size).toBe(2);
    expect((await inbox.stats()).rows.handled).toBe(30);
    await inbox.close();
  });
});
