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
  try {
    const line = await run.waitForLine(/: 10 found missing/, 30_000);
    expect(line).toMatch(
      / mail .* to .*: 10 found missing, 10 resent, 10 recovered, 0 not recoverable, 0 history gap$/,
    );
  } finally {
    run.child.kill('SIGTERM');
  }
  expect(await run.exited).toBe(0);
  // Every pass before it found nothing; each delivery was resent once.
  expect(run.lines.filter((l) => !l.includes(': 10 found missing'))).toEqual(
    run.lines.filter((l) =>
      l.endsWith(': 0 found missing, 0 resent, 0 recovered, 0 not recoverable, 0 history gap'),
    ),
  );
  expect(seen.sort()).toEqual([...lost].sort());
  expect([...(await inbox.held('mail', lost))].sort()).toEqual([...lost].sort());
  const hook = (await (await fetch(`${emulator.url}/api/v1/webhooks/${id}`, { headers: admin })).json()) as {
    status: string;
  };
  expect(hook.status).toBe('active');
  await inbox.close();
});
