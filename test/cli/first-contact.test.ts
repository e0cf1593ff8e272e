/**
 * What a new user meets first, as real subprocesses of the built bin: the event catalogue from the
 * shell, a warning for a secret no receiver accepts, `trigger` failing (exit 1) with the receiver's
 * error code when the app has another secret, and `verify` refusing an unusable secret as bad input.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRM_EVENT_NAMES, MAIL_EVENT_NAMES } from '@svc/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/express/server.js';
import { buildCli, type RunningEmulator, runCli, startEmulator, supportedNode } from './support/cli.js';

const SHORT = 'whsec_1234'; // 10 characters: signs, but no receiver accepts it
const GOOD = 'whsec_first_contact_0123456789';

let cli: string;
let dir: string;
let emulator: RunningEmulator;
const servers: Server[] = [];

function listen(server: Server): Promise<string> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'svc-first-contact-'));
  emulator = await startEmulator(cli);
});

afterAll(async () => {
  for (const server of servers) await new Promise((r) => server.close(r));
  await emulator?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the event catalogue', () => {
  it('`events` lists every event of both services, one line each with what it means', async () => {
    const run = await runCli(cli, ['events']);
    expect(run.code).toBe(0);
    for (const name of [...MAIL_EVENT_NAMES, ...CRM_EVENT_NAMES]) {
      expect(run.stdout).toMatch(new RegExp(`^  ${name.replace('.', '\\.')} +\\S.*$`, 'm'));
    }
    expect(run.stdout).toContain('The destination refused the message.');
    expect(run.stdout).toContain('A deal was marked as won. data: deal_id, title, value');
  });

  it('`events crm --json` gives one entry per event; an unknown service is exit 2', async () => {
    const run = await runCli(cli, ['events', 'crm', '--json']);
    expect(run.code).toBe(0);
    const { ok, events } = JSON.parse(run.stdout) as {
      ok: boolean;
      events: Array<{ service: string; name: string; description: string }>;
    };
    expect(ok).toBe(true);
    expect(events.map((e) => e.name)).toEqual([...CRM_EVENT_NAMES]);
    expect(events.every((e) => e.service === 'crm' && e.description.length > 10)).toBe(true);
    const unknown = await runCli(cli, ['events', 'sms']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown service "sms"');
  });

  it('`events | head`: a reader that stops early ends the command quietly (exit 0), no EPIPE stack', () => {
    const run = spawnSync(
      'bash',
      ['-c', 'set -o pipefail; "$0" "$1" events 2>"$2" | true', supportedNode, cli, join(dir, 'stderr.txt')],
      { encoding: 'utf8' },
    );
    expect(readFileSync(join(dir, 'stderr.txt'), 'utf8')).toBe('');
    expect(run.status).toBe(0);
  });

  it('`fixtures mail` without an event lists the events instead of failing', async () => {
    const run = await runCli(cli, ['fixtures', 'mail']);
    expect(run.code).toBe(0);
    for (const name of MAIL_EVENT_NAMES) expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    expect(run.stdout).not.toContain('deal.won');
  });
});

describe('a secret no receiver accepts', () => {
  it('send warns on stderr (naming where the secret came from, never its value) and still sends', async () => {
    const bodies: string[] = [];
    const url = await listen(
      createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => {
          body += c.toString('utf8');
        });
        req.on('end', () => {
          bodies.push(body);
          res.writeHead(200).end();
        });
      }),
    );
    const fromEnv = await runCli(cli, ['send', 'mail', 'opened', '--url', url], {
      env: { SVC_MAIL_WEBHOOK_SECRET: SHORT },
    });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stderr).toContain(
      'warning SVC_MAIL_WEBHOOK_SECRET: the webhook secret is shorter than 16',
    );
    expect(fromEnv.stderr).toContain('no receiver accepts');
    expect(fromEnv.stderr).toContain('openssl rand -hex 24');
    const fromOption = await runCli(cli, [
      'send',
      'crm',
      'deal.won',
      '--url',
      url,
      '--secret',
      SHORT,
      '--json',
    ]);
    expect(fromOption.code).toBe(0);
    expect(JSON.parse(fromOption.stdout).ok).toBe(true);
    expect(fromOption.stderr).toContain('warning --secret: the webhook secret is shorter than 16');
    for (const run of [fromEnv, fromOption]) expect(run.stdout + run.stderr).not.toContain(SHORT);
    expect(bodies).toHaveLength(2);

    const good = await runCli(cli, ['send', 'mail', 'opened', '--url', url, '--secret', GOOD]);
    expect(good.stderr).toBe('');
  });

  it('verify refuses it as bad input: exit 2, secret_invalid, before reading the delivery', async () => {
    const body = join(dir, 'body.json');
    writeFileSync(body, '{"event":"opened"}');
    const run = await runCli(cli, ['verify', '--service', 'mail', '--secret', SHORT, body]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--secret: the webhook secret is shorter than 16 characters');
    const json = await runCli(cli, ['verify', '--service', 'crm', body, '--json'], {
      env: { SVC_CRM_WEBHOOK_SECRET: ` ${GOOD}\n` },
    });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'secret_invalid' });
    expect(JSON.parse(json.stdout).error.message).toContain('SVC_CRM_WEBHOOK_SECRET');
    expect(json.stdout).not.toContain(GOOD);
  });
});

describe('trigger against an app that checks another secret', () => {
  it("exits 1 and prints the receiver's error code (401 signature_mismatch)", async () => {
    const handled: string[] = [];
    const app = await listen(
      createServer(
        createApp({ mailSecret: GOOD, crmSecret: GOOD, print: (l) => handled.push(l), logger: () => {} }),
      ),
    );
    const created = await fetch(`${emulator.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'X-API-Key': 'zm_live_test_admin', 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${app}/webhooks/mail`, events: ['bounced'] }),
    });
    const { id } = (await created.json()) as { id: string };

    const run = await runCli(cli, ['trigger', 'mail', 'bounced', '--emulator', emulator.url]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^pending bounced -> \S+ \S+ 401 signature_mismatch$/m);
    expect(run.stdout).toContain('start it with the secret the registration');

    const json = await runCli(cli, ['trigger', 'mail', 'bounced', '--emulator', emulator.url, '--json']);
    expect(json.code).toBe(1);
    const result = JSON.parse(json.stdout) as { ok: boolean; deliveries: Array<{ errorCode?: string }> };
    expect(result.ok).toBe(false);
    expect(result.deliveries[0]!.errorCode).toBe('signature_mismatch');
    expect(handled).toEqual([]);

    // The app started with the secret the registration returned: 2xx, exit 0.
    await fetch(`${emulator.url}/api/v1/webhooks/${id}`, {
      method: 'DELETE',
      headers: { 'X-API-Key': 'zm_live_test_admin' },
    });
    let handler: ReturnType<typeof createApp> | undefined;
    const right = await listen(createServer((req, res) => handler!(req, res)));
    const again = await fetch(`${emulator.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'X-API-Key': 'zm_live_test_admin', 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${right}/webhooks/mail`, events: ['bounced'] }),
    });
    const registered = (await again.json()) as { secret: string };
    handler = createApp({
      mailSecret: registered.secret,
      crmSecret: GOOD,
      print: (l) => handled.push(l),
      logger: () => {},
    });
    const ok = await runCli(cli, ['trigger', 'mail', 'bounced', '--emulator', emulator.url]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^succeeded bounced -> .* 200$/m);
    expect(handled).toHaveLength(1);
  });
});
