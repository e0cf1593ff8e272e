/**
 * `svc-webhooks reconcile` (the built bin) against a running emulator and an app's SQLite inbox: an
 * outage pauses the email webhook after 10 failed deliveries; once the app is back, the reconciler on
 * its schedule reactivates it and resends each delivery once; every one is a row of the inbox, and
 * SIGTERM ends the loop cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailReceiver } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { createSqliteInbox } from '@svc/webhooks/sqlite';
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer } from '../testing/support/servers.js';
import { buildCli, type RunningEmulator, startCli, startEmulator } from './support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'reconcile-cli-'));
const path = join(dir, 'app.sqlite');
let cli: string;
let emulator: RunningEmulator;
let app: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  cli = await buildCli();
  emulator = await startEmulator(cli, ['--speed', '600']);
  app = await startServer();
});
afterAll(async () => {
  await emulator?.stop();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (route: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${emulator.url}${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

it('reconcile --every 10m: the paused webhook reactivated, 10 deliveries resent once, each a row', async () => {
  const admin = { 'X-API-Key': 'zm_live_test_admin' };
  const created = await post('/api/v1/webhooks', { url: `${app.url}/hooks`, events: ['bounced'] }, admin);
  const { id, secret } = (await created.json()) as { id: string; secret: string };
  const inbox = createSqliteInbox({ path });
  await inbox.migrate();
  const receiver = createMailReceiver({ secret, handoff: inbox, logger: false }).onAny(() => {});
  let up = false;
  const seen: string[] = [];
  const server = express();
  server.post(
    '/hooks',
    (req, res, next) => {
      seen.push(String(req.headers['x-svcmail-id']));
      if (up) next();
      else res.status(503).end();
    },
    createExpressMiddleware(receiver),
  );
  app.use(server);
  for (let i = 0; i < 10; i++) await post('/_emulator/events', { service: 'mail', event: 'bounced' });
  await emulator.waitFor((l) => l.type === 'webhook_paused' && l.webhookId === id);
  const lost = [...new Set(seen)];
  expect(lost).toHaveLength(10);
  up = true;
  seen.length = 0;

  const run = startCli(cli, ['reconcile', '--service', 'mail', '--emulator', emulator.url, '--file', path]);
  // The outage may straddle two windows (at 600× the ten events span emulated minutes): the passes'
  // counts add up to the ten.
  const COUNTS =
    /^\S+ mail \S+ to \S+: (\d+) found missing, (\d+) resent, (\d+) recovered, (\d+) not recoverable, (\d+) history gap$/;
  const totals = () =>
    run.lines.reduce(
      (sum, line) => {
        const n = COUNTS.exec(line)?.slice(1).map(Number) ?? [0, 0, 0, 0, 0];
        return sum.map((value, i) => value + n[i]!);
      },
      [0, 0, 0, 0, 0],
    );
  try {
    // Lines are read by startCli's listener first: by this listener's turn they are in run.lines.
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (totals()[0]! < 10) return;
        run.child.stdout!.off('data', check);
        resolve();
      };
      run.child.stdout!.on('data', check);
      void run.exited.then(() => reject(new Error(`exited: ${run.lines.join('\n')}\n${run.stderr()}`)));
    });
  } finally {
    run.child.kill('SIGTERM');
  }
  expect(await run.exited).toBe(0);
  // Every line a pass, each delivery resent once and held after it.
  expect(totals()).toEqual([10, 10, 10, 0, 0]);
  expect(run.lines.every((line) => COUNTS.test(line))).toBe(true);
  expect(seen.sort()).toEqual([...lost].sort());
  expect([...(await inbox.held('mail', lost))].sort()).toEqual([...lost].sort());
  const hook = (await (await fetch(`${emulator.url}/api/v1/webhooks/${id}`, { headers: admin })).json()) as {
    status: string;
  };
  expect(hook.status).toBe('active');
  await inbox.close();
}, 60_000);
