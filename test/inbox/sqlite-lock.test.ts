/**
 * The SQLite inbox while another process holds the file's write lock: its connection never blocks
 * the event loop waiting for the lock (no busy_timeout; it retries off the loop, as the SQLite dedup
 * store does), deliveries land once the lock is released, and a lock held past the receiver's bound
 * answers 503 (the sender's retry then lands: nothing is lost). Before, the inbox's connection had a
 * 20 ms busy_timeout: every waiting statement blocked the thread 20 ms per attempt, 415 to 466 ms of
 * event-loop lag at 20 deliveries (bench/inbox-lock-lag.mts measures the lag).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailReceiver } from '@svc/webhooks';
import { createSqliteInbox } from '@svc/webhooks/sqlite';
import { createSignedRequest } from '@svc/webhooks/testing';
import { afterAll, expect, it } from 'vitest';
import { sqliteDb } from '../../src/inbox/db.js';
import { openRawSqlite } from '../support/sqlite.js';
import { holdSqliteLock } from '../support/sqlite-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-inbox-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SECRET = 'whsec_inbox_lock_test_0123456789abcdef';
const DELIVERIES = 20;
const delivery = () => createSignedRequest({ service: 'mail', event: 'delivered', secret: SECRET });

function rowCount(file: string): number {
  const db = openRawSqlite(file, { readOnly: true });
  const { n } = db.prepare('SELECT COUNT(*) AS n FROM webhook_inbox').get() as { n: number };
  db.close();
  return Number(n);
}

it('the inbox connection has no busy_timeout: a locked file never blocks the thread', async () => {
  const db = sqliteDb(join(dir, 'pragma.sqlite'), 3_000, 'normal');
  const [row] = await db.query('PRAGMA busy_timeout', []);
  await db.close();
  expect(Number(Object.values(row!)[0])).toBe(0);
});

it('20 deliveries wait out another process holding the write lock, the event loop turning, and land', async () => {
  const file = join(dir, 'waits.sqlite');
  const inbox = createSqliteInbox({ path: file });
  await inbox.migrate();
  const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger: () => {} });
  expect((await receiver.handle(await delivery())).status).toBe(200);
  const requests = await Promise.all(Array.from({ length: DELIVERIES }, delivery));
  const { released } = await holdSqliteLock(file, 1_000);
  // Turns of the event loop while the deliveries wait (a timer chain: one turn per tick).
  let turns = 0;
  let waiting = true;
  const tick = () => {
    turns++;
    if (waiting) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  const answers = await Promise.all(requests.map((request) => receiver.handle(request)));
  waiting = false;
  await released;
  expect(answers.map((a) => a.status)).toEqual(Array(DELIVERIES).fill(200));
  expect(rowCount(file)).toBe(DELIVERIES + 1);
  // Before: 3 turns in that second (each waiting statement blocked the thread 20 ms per attempt);
  // now hundreds. More than one per delivery is a floor far below either, not a speed.
  expect(turns).toBeGreaterThan(DELIVERIES);
  console.log(`${turns} event-loop turns while ${DELIVERIES} deliveries waited for the lock`);
  await inbox.close();
});

it('a lock held past the receiver’s bound answers 503; the retry after it lands, once', async () => {
  const file = join(dir, 'bound.sqlite');
  const inbox = createSqliteInbox({ path: file, callTimeoutMs: 500 });
  await inbox.migrate();
  const receiver = createMailReceiver({
    secret: SECRET,
    handoff: inbox,
    storeTimeoutMs: 500,
    logger: () => {},
  });
  const requests = await Promise.all(Array.from({ length: 3 }, delivery));
  const retries = requests.map((request) => request.clone());
  const { released } = await holdSqliteLock(file, 2_000);
  const answers = await Promise.all(requests.map((request) => receiver.handle(request)));
  expect(answers.map((a) => a.status)).toEqual([503, 503, 503]);
  await released;
  const again = await Promise.all(retries.map((request) => receiver.handle(request)));
  expect(again.map((a) => a.status)).toEqual([200, 200, 200]);
  expect(rowCount(file)).toBe(3);
  await inbox.close();
});
