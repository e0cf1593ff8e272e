/**
 * A receiver process on the SQLite store, SIGKILLed while a handler runs, then started again on the
 * same file: the delivery handled before the crash is answered as a duplicate, and the sender's
 * retries of the one cut short run its handler once, after the crashed attempt's lease ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, type Delivery } from '../receivers/support.js';
import { openRawSqlite } from '../support/sqlite.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./fixtures/sqlite-receiver.ts', import.meta.url));

interface ReceiverProcess {
  child: ChildProcess;
  url: string;
  /** Every `started` / `handled` line, in order. */
  lines: string[];
  waitFor(line: string): Promise<void>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

async function startReceiver(file: string, hang = ''): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, SQLITE_FILE: file, CRM_SECRET, HANG: hang },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  const waiters: { line: string; resolve: () => void }[] = [];
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const line of parts) {
        if (line.startsWith('listening ')) resolve(Number(line.slice(10)));
        else lines.push(line);
        for (const waiter of waiters.filter((w) => w.line === line)) waiter.resolve();
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`receiver exited (${code ?? signal}): ${errors}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}/`,
    lines,
    waitFor: (line) =>
      lines.includes(line) ? Promise.resolve() : new Promise((resolve) => waiters.push({ line, resolve })),
  };
}

const send = (url: string, delivery: Delivery) =>
  fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });

describe('SIGKILL of a receiver process on the SQLite store', () => {
  it('after a restart on the same file, each delivery has run its handler once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-crash-'));
    const file = join(dir, 'dedup.sqlite');
    try {
      const done = crmDelivery('deal.won');
      const cut = crmDelivery('deal.won');
      const first = await startReceiver(file, cut.deliveryId);
      expect((await send(first.url, done)).status).toBe(200);
      const pending = send(first.url, cut).then(
        (response) => response.status,
        () => 'no answer',
      );
      await first.waitFor(`started ${cut.deliveryId}`);
      first.child.kill('SIGKILL');
      expect(await pending).toBe('no answer'); // the sender saw no answer: it retries

      // What the crash left in the file: the completion, and the cut attempt's claim.
      const raw = openRawSqlite(file);
      const row = (key: string) =>
        raw.prepare('SELECT completed FROM webhook_dedup WHERE key = ?').get(key) as
          | { completed: number }
          | undefined;
      expect(row(`crm:delivery:${done.deliveryId}`)).toEqual(expect.objectContaining({ completed: 1 }));
      expect(row(`crm:delivery:${cut.deliveryId}`)).toEqual(expect.objectContaining({ completed: 0 }));
      raw.close();

      const second = await startReceiver(file);
      expect(await send(second.url, done).then((r) => r.json())).toMatchObject({ result: 'duplicate' });
      // The sender's retries: 409 while the crashed attempt's lease lasts, then handled.
      const statuses: number[] = [];
      while (statuses.at(-1) !== 200 && statuses.length < 100) {
        if (statuses.length > 0) await sleep(100);
        statuses.push((await send(second.url, cut)).status);
      }
      expect(statuses.at(-1)).toBe(200);
      expect(statuses.slice(0, -1).every((status) => status === 409)).toBe(true);
      expect(await send(second.url, cut).then((r) => r.json())).toMatchObject({ result: 'duplicate' });

      expect(first.lines).toEqual([
        `started ${done.deliveryId}`,
        `handled ${done.deliveryId}`,
        `started ${cut.deliveryId}`,
      ]);
      expect(second.lines).toEqual([`started ${cut.deliveryId}`, `handled ${cut.deliveryId}`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
