/**
 * The statements a worker sends on the inbox's own connection (no transaction adapter) are a fixed
 * set, whatever the number of rows: the completion is a parameterised statement (of one row, or of
 * up to 16 padded). An inlined text
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

  it('runs 30 rows with the same fixed statement texts (claim, completion of one row, of several)', async () => {
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
    // Rows finishing while a completion runs go together in the padded one (completions.ts).
    const { statements } = queueOf(inbox);
    expect(
      [...texts].every((text) =>
        [statements.claim, statements.complete, statements.completeMany].includes(text),
      ),
    ).toBe(true);
    expect(texts.has(statements.claim) && texts.has(statements.complete)).toBe(true);
    expect((await inbox.stats()).rows.handled).toBe(30);
    await inbox.close();
  });
});
