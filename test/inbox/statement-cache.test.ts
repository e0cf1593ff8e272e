/**
 * The SQLite inbox connection keeps a bounded set of prepared statements. A worker without a
 * transaction adapter completes each row with a statement made for that row (its id, fencing token
 * and time inlined); before the bound, the connection kept every one of them prepared, one native
 * statement per row run, so the worker's memory grew with the rows it ran (docs/inbox.md, "Numbers").
 * Checked on a real SQLite file, and on the cache alone.
 */
import { createMailReceiver } from '@svc/webhooks';
import { createInboxWorker } from '@svc/webhooks/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueOf } from '../../src/inbox/inbox.js';
import { createStatementCache, STATEMENT_CACHE_LIMIT } from '../../src/inbox/statement-cache.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type InboxDatabase, sqliteDatabase, uniqueTable } from './support.js';

const quiet = () => {};

describe('the SQLite inbox connection’s prepared statements', () => {
  let db: InboxDatabase;
  beforeAll(() => {
    db = sqliteDatabase();
  });
  afterAll(() => db?.close());

  it('stay bounded while a worker completes more rows than the bound, each row handled once', async () => {
    const table = uniqueTable('statements');
    const inbox = db.inbox({ table });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger: quiet });
    const rows = STATEMENT_CACHE_LIMIT * 2 + 10;
    for (let i = 0; i < rows; i++)
      expect((await deliver(receiver, mailDelivery('delivered', { messageId: `msg_${i}` }))).status).toBe(
        200,
      );
    const handled: string[] = [];
    receiver.on('delivered', (event) => {
      handled.push(event.payload.message_id);
    });
    const worker = createInboxWorker({ receiver, inbox, concurrency: 4 });
    while ((await worker.runOnce()) > 0);
    expect(handled).toHaveLength(rows);
    expect(new Set(handled).size).toBe(rows);
    const [{ n }] = (await db.sql(`SELECT count(*) AS n FROM ${table} WHERE status = 'handled'`)) as [
      { n: number },
    ];
    expect(Number(n)).toBe(rows);
    const count = queueOf(inbox).db.statementCount?.();
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(STATEMENT_CACHE_LIMIT);
    await inbox.close();
  });
});

describe('createStatementCache', () => {
  it('prepares a text once while it is used, and evicts the least recently used past the limit', () => {
    const prepared: string[] = [];
    const cache = createStatementCache((text) => {
      prepared.push(text);
      return { text };
    }, 3);
    const hot = cache.get('claim');
    for (let i = 0; i < 10; i++) {
      expect(cache.get('claim')).toBe(hot);
      cache.get(`complete ${i}`);
      expect(cache.size).toBeLessThanOrEqual(3);
    }
    expect(prepared.filter((text) => text === 'claim')).toHaveLength(1);
    expect(cache.get('complete 9')).toEqual({ text: 'complete 9' });
    cache.get('complete 0'); // evicted long ago: prepared again
    expect(prepared.filter((text) => text === 'complete 0')).toHaveLength(2);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
