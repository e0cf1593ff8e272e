/**
 * `svc-webhooks recover` (the built bin) against a running emulator: an outage pauses an email
 * webhook after 10 failed deliveries; once the app is back, one command reactivates it and retries
 * each failure once; the app receives every delivery again with its original id.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, type RunningEmulator, runCli, startEmulator } from './support/cli.js';

let cli: string;
let emulator: RunningEmulator;
let server: Server;
let appUrl: string;
let status = 503;
const ids: string[] = [];

beforeAll(async () => {
  cli = await buildCli();
  emulator = await startEmulator(cli, ['--speed', '600']);
  server = createServer((req, res) => {
    ids.push(String(req.headers['x-svcmail-id'] ?? req.headers['x-svc-delivery']));
    req.resume();
    req.on('end', () => res.writeHead(status).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  await emulator?.stop();
  await new Promise((r) => server?.close(r));
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

/**
 * The emulator's time now, for `--since`: a duration would count back from whenever the command
 * reads the clock, and at 600× an emulated hour is 6 real seconds (a slow machine's few CLI starts).
 */
async function emulatorNow(): Promise<string> {
  const state = (await (await fetch(`${emulator.url}/_emulator/state`)).json()) as { now: number };
  return new Date(state.now).toISOString();
}

describe('recover', () => {
  it('reactivates the paused email webhook and re-drives its 10 failed deliveries', async () => {
    const created = await post(
      '/api/v1/webhooks',
      { url: appUrl, events: ['bounced'] },
      { 'X-API-Key': 'zm_live_test_admin' },
    );
    const { id } = (await created.json()) as { id: string };
    const since = await emulatorNow();
    for (let i = 0; i < 10; i++) await post('/_emulator/events', { service: 'mail', event: 'bounced' });
    await emulator.waitFor((l) => l.type === 'webhook_paused' && l.webhookId === id);
    const failed = new Set(ids);
    expect(failed.size).toBe(10);

    const dry = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      since,
      '--emulator',
      emulator.url,
      '--dry-run',
      '--json',
    ]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, dryRun: true, retried: [] });

    status = 200;
    ids.length = 0;
    const run = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      since,
      '--emulator',
      emulator.url,
      '--json',
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, service: 'mail', stopped: null });
    expect(report.webhooks[0]).toMatchObject({ webhookId: id, reactivated: true, failed: 10 });
    expect(report.succeeded).toHaveLength(10);
    // The same delivery ids: a deduplicating receiver handles each once.
    expect(new Set(ids)).toEqual(failed);

    const text = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      since,
      '--emulator',
      emulator.url,
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('mail recovery since');
    expect(text.stdout).toContain('retried: 0');
  });

  it('a 429 storm: with a key limited to 1 call a minute, it waits out each window and finishes', async () => {
    status = 503;
    const admin = { 'X-API-Key': 'zm_live_test_admin' };
    const { id } = (await (
      await post('/api/v1/webhooks', { url: appUrl, events: ['complained'] }, admin)
    ).json()) as {
      id: string;
    };
    for (let i = 0; i < 10; i++) await post('/_emulator/events', { service: 'mail', event: 'complained' });
    await emulator.waitFor((l) => l.type === 'webhook_paused' && l.webhookId === id);
    const key = (await (
      await post('/api/v1/auth/api-keys', { name: 'slow', scopes: ['admin'], rateLimitPerMinute: 1 }, admin)
    ).json()) as { value: string };

    status = 200;
    const run = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      '30d',
      '--emulator',
      emulator.url,
      '--api-key',
      key.value,
      '--webhook',
      id,
      '--json',
    ]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ ok: true, stopped: null });
    expect(report.succeeded).toHaveLength(10);
    // 12+ calls at 1 a minute: several waits, each noted on stderr (an emulated minute is 0.1 s here).
    expect(run.stderr.match(/rate limited/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
    expect(run.stderr).not.toContain(key.value);
  });

  it('CRM failures cannot be resent: reported as not recoverable, exit 1', async () => {
    status = 500;
    const created = await post(
      '/v1/webhooks',
      { name: 'n', url: appUrl, events: ['deal.lost'] },
      { Authorization: 'Bearer crm_test_token' },
    );
    const { id } = (await created.json()) as { id: string };
    const since = await emulatorNow();
    const emitted = await post('/_emulator/events', { service: 'crm', event: 'deal.lost' });
    const deliveryId = ((await emitted.json()) as { deliveries: Array<{ id: string }> }).deliveries[0]!.id;
    await emulator.waitFor((l) => l.type === 'delivery_settled' && l.deliveryId === deliveryId);
    const run = await runCli(cli, [
      'recover',
      '--service',
      'crm',
      '--since',
      since,
      '--emulator',
      emulator.url,
      '--webhook',
      id,
      '--json',
    ]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.notRecoverable.map((i: { deliveryId: string }) => i.deliveryId)).toEqual([deliveryId]);
  });

  it('exit 2 without credentials or with a bad --since; exit 3 when the API is down', async () => {
    const noKey = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      '2h',
      '--base-url',
      emulator.url,
    ]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('SVC_MAIL_API_KEY');
    const badSince = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      'lately',
      '--emulator',
      emulator.url,
    ]);
    expect(badSince.code).toBe(2);
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const down = await runCli(cli, [
      'recover',
      '--service',
      'crm',
      '--since',
      '2h',
      '--base-url',
      `http://127.0.0.1:${port}`,
      '--token',
      't',
    ]);
    expect(down.code).toBe(3);
    const wrongKey = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      '2h',
      '--base-url',
      emulator.url,
      '--api-key',
      'zm_live_nope',
      '--json',
    ]);
    expect(wrongKey.code).toBe(1);
    expect(JSON.parse(wrongKey.stdout).error.code).toBe('unauthorized');
  });
});
