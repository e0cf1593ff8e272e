/**
 * The SQLite store while another process holds the file's write lock: deliveries wait for it without
 * stalling the event loop. A child process holds `BEGIN IMMEDIATE` while 30 claims wait; the
 * longest event-loop stall meanwhile stays a small part of the wait (before: SQLite's busy_timeout
 * blocked the thread for every waiting call in turn, hundreds of ms at a time).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCrmReceiver } from '@svc/webhooks';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import { afterAll, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { holdSqliteLock } from '../support/sqlite-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOLD_MS = 3_000;

const holdLock = (file: string) => holdSqliteLock(file, HOLD_MS);

it('30 claims wait out another process holding the write lock without stalling the event loop', async () => {
  const file = join(dir, 'dedup.sqlite');
  const dedup = createSqliteStore({ path: file });
  await dedup.claim('crm:delivery:first', { leaseMs: 15_000 }); // the table exists, statements prepared
  const { released } = await holdLock(file);

  // The longest gap between two ticks of a 5 ms interval while the claims wait.
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const key = `crm:delivery:waiting-${i}`;
      const claim = await dedup.claim(key, { leaseMs: 15_000, callTimeoutMs: 5_000 });
      if (claim.status !== 'claimed') return claim.status;
      return (await dedup.complete(key, claim.token, { ttlMs: 86_400_000 })) ? 'completed' : 'lost';
    }),
  );
  const waited = performance.now() - started;
  clearInterval(ticker);
  await released;

  expect(answers).toEqual(Array(30).fill('completed'));
  expect(waited).toBeGreaterThan(HOLD_MS / 2); // they did wait for the lock
  // A behavioural bound, not a speed: the loop ran all along (a stall is a tenth of the wait at most;
  // before, SQLite's busy_timeout blocked it 20 ms per waiting claim in turn: 600 ms and more).
  expect(longest).toBeLessThan(waited / 10);
  console.log(
    `waited ${waited.toFixed(0)} ms for the lock; longest event-loop stall ${longest.toFixed(1)} ms`,
  );
  await dedup.close();
});

it('a delivery waits for the lock within storeTimeoutMs and is handled once it is free', async () => {
  const file = join(dir, 'receiver.sqlite');
  const dedup = createSqliteStore({ path: file });
  const receiver = createCrmReceiver({ secret: CRM_SECRET, dedup, storeTimeoutMs: 5_000 });
  let runs = 0;
  receiver.on('deal.won', () => void runs++);
  await deliver(receiver, crmDelivery('deal.won'));
  const { released } = await holdLock(file);
  const answers = await Promise.all(
    Array.from({ length: 5 }, () => deliver(receiver, crmDelivery('deal.won'))),
  );
  await released;
  expect(answers.map((a) => a.status)).toEqual(Array(5).fill(200));
  expect(runs).toBe(6);
  await dedup.close();
});
