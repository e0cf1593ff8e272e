/**
 * `svc-webhooks emulate` as a real process (the built bin on Node 20): apps provision webhooks over
 * HTTP with the printed credentials, events happen through the `trigger` command and the HTTP route,
 * deliveries arrive signed (checked with node:crypto), retries and pausing follow the specs' timing
 * on the emulator's clock (sped up with --speed).
 */
import { createHmac } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, type RunningEmulator, runCli, startEmulator } from './support/cli.js';

interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A local app that records every request and answers with `status()`. */
async function startApp(
  status: () => number,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const sign = (body: string, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

let cli: string;
let emulator: RunningEmulator;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  cli = await buildCli();
  // 600×: the email service's +1 min and +2 min retries take 0.1 s and 0.2 s of real time.
  emulator = await startEmulator(cli, ['--speed', '600']);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
afterAll(async () => {
  expect(await emulator?.stop()).toBe(0);
});

const mailApi = (path: string, init: RequestInit = {}) =>
  fetch(`${emulator.url}/api/v1${path}`, {
    ...init,
    headers: { 'X-API-Key': 'zm_live_test_admin', 'Content-Type': 'application/json', ...init.headers },
  });
const crmApi = (path: string, init: RequestInit = {}) =>
  fetch(`${emulator.url}/v1${path}`, {
    ...init,
    headers: { Authorization: 'Bearer crm_test_token', 'Content-Type': 'application/json', ...init.headers },
  });

describe('emulate', () => {
  it('prints where it listens with the test credentials', () => {
    expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('an email webhook provisioned over HTTP receives a signed delivery from `trigger`', async () => {
    const app = await startApp(() => 200);
    cleanups.push(app.close);
    const created = await mailApi('/webhooks', {
      method: 'POST',
      body: JSON.stringify({ url: app.url, events: ['bounced'], description: 'cli test' }),
    });
    expect(created.status).toBe(201);
    const { id, secret } = (await created.json()) as { id: string; secret: string };

    const run = await runCli(cli, [
      'trigger',
      'mail',
      'bounced',
      '--emulator',
      emulator.url,
      '--set',
      'to=ana@example.com',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const { deliveries } = JSON.parse(run.stdout) as { deliveries: Array<{ id: string; status: string }> };
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.status).toBe('succeeded');

    const [request] = app.received;
    expect(JSON.parse(request!.body)).toMatchObject({ event: 'bounced', to: 'ana@example.com' });
    expect(request!.headers['x-svcmail-sig']).toBe(sign(request!.body, secret));
    expect(request!.headers['x-svcmail-id']).toBe(deliveries[0]!.id);

    const history = (await (await mailApi(`/webhooks/${id}/deliveries`)).json()) as { data: unknown[] };
    expect(history.data[0]).toMatchObject({ deliveryId: deliveries[0]!.id, statusCode: 200, success: true });
    await mailApi(`/webhooks/${id}`, { method: 'DELETE' });
  });

  it('retries at +1 and +2 minutes on its clock, then pauses after 10 failed deliveries; reactivation resumes', async () => {
    let status = 503;
    const app = await startApp(() => status);
    cleanups.push(app.close);
    const { id } = (await (
      await mailApi('/webhooks', {
        method: 'POST',
        body: JSON.stringify({ url: app.url, events: ['opened'] }),
      })
    ).json()) as { id: string };

    const first = await runCli(cli, ['trigger', 'mail', 'opened', '--emulator', emulator.url, '--json']);
    const deliveryId = (JSON.parse(first.stdout) as { deliveries: Array<{ id: string }> }).deliveries[0]!.id;
    const settled = await emulator.waitFor(
      (l) => l.type === 'delivery_settled' && l.deliveryId === deliveryId,
    );
    expect(settled.status).toBe('failed');
    const attempts = emulator.lines.filter((l) => l.type === 'attempt' && l.deliveryId === deliveryId);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts.map((a) => a.statusCode)).toEqual([503, 503, 503]);
    // email-service §6 rule 4: attempts 2 and 3 at +1 and +2 minutes from the first one's start
    // (emulated time; a retry's timer never runs before its time on the emulator's clock).
    const at = attempts.map((a) => Date.parse(String(a.attemptedAt)));
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(60_000);
    expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(120_000);
    // Each at or after the time the previous attempt announced.
    expect(at[1]).toBeGreaterThanOrEqual(Date.parse(String(attempts[0]!.nextAttemptAt)));
    expect(at[2]).toBeGreaterThanOrEqual(Date.parse(String(attempts[1]!.nextAttemptAt)));
    expect(app.received).toHaveLength(3);
    expect(new Set(app.received.map((r) => r.headers['x-svcmail-id']))).toEqual(new Set([deliveryId]));

    // Nine more fully failed deliveries: the tenth pauses the webhook (email-service §3).
    for (let i = 0; i < 9; i++) {
      const run = await fetch(`${emulator.url}/_emulator/events`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ service: 'mail', event: 'opened' }),
      });
      expect(run.status).toBe(200);
    }
    const paused = await emulator.waitFor((l) => l.type === 'webhook_paused' && l.webhookId === id);
    expect(paused.service).toBe('mail');
    expect(((await (await mailApi(`/webhooks/${id}`)).json()) as { status: string }).status).toBe('paused');

    const whilePaused = await runCli(cli, ['trigger', 'mail', 'opened', '--emulator', emulator.url]);
    expect(whilePaused.code).toBe(0);
    expect(whilePaused.stdout).toContain('no active webhook subscribes to it');

    status = 200;
    const reactivated = await mailApi(`/webhooks/${id}`, {
      method: 'PATCH',
      body: JSON.stringify({ status: 'active' }),
    });
    expect(reactivated.status).toBe(200);
    const after = await runCli(cli, ['trigger', 'mail', 'opened', '--emulator', emulator.url, '--json']);
    expect(JSON.parse(after.stdout).deliveries[0].status).toBe('succeeded');
    await mailApi(`/webhooks/${id}`, { method: 'DELETE' });
  });

  it('a CRM webhook provisioned with the printed token gets signed envelopes, retried 1 s and 2 s apart', async () => {
    let calls = 0;
    const app = await startApp(() => (++calls < 3 ? 500 : 204));
    cleanups.push(app.close);
    const created = await crmApi('/webhooks', {
      method: 'POST',
      body: JSON.stringify({ name: 'cli', url: app.url, events: ['deal.won'] }),
    });
    expect(created.status).toBe(201);
    const { id, secret } = (await created.json()) as { id: string; secret: string };
    const run = await runCli(cli, [
      'trigger',
      'crm',
      'deal.won',
      '--emulator',
      emulator.url,
      '--set',
      'value=42',
      '--json',
    ]);
    const deliveryId = JSON.parse(run.stdout).deliveries[0].id as string;
    const settled = await emulator.waitFor(
      (l) => l.type === 'delivery_settled' && l.deliveryId === deliveryId,
    );
    expect(settled.status).toBe('succeeded');
    expect(app.received).toHaveLength(3);
    for (const request of app.received) {
      expect(request.headers['x-svc-signature']).toBe(sign(request.body, secret));
      expect(JSON.parse(request.body)).toMatchObject({
        id: deliveryId,
        event: 'deal.won',
        data: { value: 42 },
      });
      expect(request.headers['user-agent']).toBe('Svc-CRM-Webhook/1.0');
    }
    const at = emulator.lines
      .filter((l) => l.type === 'attempt' && l.deliveryId === deliveryId)
      .map((a) => Date.parse(String(a.attemptedAt)));
    // crm-service §6 rule 5: 1 s, then 2 s after the previous attempt ended (emulated time; a retry's
    // timer never runs before its time on the emulator's clock).
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(1_000);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(2_000);
    await crmApi(`/webhooks/${id}`, { method: 'DELETE' });
  });

  it('refuses bad credentials, cross-site writes, foreign hosts and bad event bodies', async () => {
    expect(
      (await fetch(`${emulator.url}/api/v1/webhooks`, { headers: { 'X-API-Key': 'zm_live_nope' } })).status,
    ).toBe(401);
    expect((await fetch(`${emulator.url}/v1/webhooks`)).status).toBe(401);
    const form = await fetch(`${emulator.url}/_emulator/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: '{"service":"mail","event":"opened"}',
    });
    expect(form.status).toBe(415);
    const bad = await fetch(`${emulator.url}/_emulator/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"service":"mail","event":"exploded"}',
    });
    expect(bad.status).toBe(400);
    const rebinding = await new Promise<number>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: emulator.port,
          path: '/_emulator/state',
          headers: { Host: 'evil.example' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.end();
    });
    expect(rebinding).toBe(403);
  });

  it('trigger: exit 2 for an unknown event, exit 3 when no emulator runs', async () => {
    const unknown = await runCli(cli, ['trigger', 'crm', 'deal.exploded', '--emulator', emulator.url]);
    expect(unknown.code).toBe(2);
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const down = await runCli(cli, ['trigger', 'mail', 'opened', '--emulator', `http://127.0.0.1:${port}`]);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('svc-webhooks emulate');
  });

  it('emulate exits 3 when its port is taken, 2 for a bad --speed', async () => {
    const taken = await runCli(cli, ['emulate', '--port', String(emulator.port)]);
    expect(taken.code).toBe(3);
    expect(taken.stderr).toContain('EADDRINUSE');
    expect((await runCli(cli, ['emulate', '--speed', '0'])).code).toBe(2);
  });
});
