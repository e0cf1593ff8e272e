/**
 * `svc-webhooks emulate --forward` as a real process (the built bin on Node 20) against a real app
 * (the Express example with this package's receivers, on port 0): the webhooks are registered at
 * start with the app's secret from the environment (none printed), a check delivery reaches each
 * forward, every attempt is streamed as one line with the receiver's error code (a wrong CRM secret
 * shows `signature_mismatch` and the retries), a generated secret is printed once and works, answers
 * stay bounded on the terminal, bad options are refused (exit 2), and SIGINT stops it (exit 0).
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/express/server.js';
import { buildCli, type RunningCli, runCli, startCli } from './support/cli.js';

const MAIL_SECRET = 'whsec_forward_mail_0123456789abcdef';
const CRM_SECRET = 'whsec_forward_crm_0123456789abcdef0';
const WRONG_CRM_SECRET = 'whsec_not_the_apps_crm_secret_0123';

let cli: string;
const servers: Server[] = [];
const handled: Array<{ service: string; event: string; deliveryId: string }> = [];

function listen(server: Server): Promise<string> {
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/** The Express example with these secrets, on a free port; handled events land in `handled`. */
function startApp(mailSecret: string, crmSecret: string): Promise<string> {
  const app = createApp({
    mailSecret,
    crmSecret,
    print: (line) => handled.push(JSON.parse(line) as (typeof handled)[number]),
    logger: () => {},
  });
  return listen(createServer(app));
}

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** The attempt lines: `HH:MM:SS  service  event  #n kind  deliveryId  answer  N ms`. */
const attemptLine = (service: string, event: string, attempt: string, answer: string) =>
  new RegExp(
    `^\\d\\d:\\d\\d:\\d\\d  ${service} +${event.replace('.', '\\.')} +${attempt} +[0-9a-f-]{36}  ${answer}  \\d+ ms`,
  );

describe('emulate --forward', () => {
  let app: string;
  let run: RunningCli;
  let emulatorUrl: string;

  it('registers both forwards, keeps given secrets unprinted and checks each: 200, and 401 signature_mismatch', async () => {
    app = await startApp(MAIL_SECRET, CRM_SECRET);
    const started = performance.now();
    run = startCli(
      cli,
      [
        'emulate',
        '--port',
        '0',
        '--speed',
        '600',
        '--forward',
        `mail=${app}/webhooks/mail`,
        '--forward',
        `crm=${app}/webhooks/crm`,
        '--secret',
        `crm=${WRONG_CRM_SECRET}`,
      ],
      { env: { SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET } },
    );
    const first = await run.waitForLine(attemptLine('mail', 'delivered', '#1 test', '200'));
    // From nothing to a delivery the app verified and handled: printed for the record, not asserted.
    console.log(
      `emulate --forward: first verified delivery ${Math.round(performance.now() - started)} ms after start`,
    );
    expect(first).toBeTruthy();
    emulatorUrl = /on (http:\/\/127\.0\.0\.1:\d+)\//.exec(run.lines[0]!)![1]!;
    const header = run.lines.join('\n');
    expect(header).toMatch(
      new RegExp(`forward +mail -> ${app}/webhooks/mail +\\(webhook wh_[0-9a-f]+, every event\\)`),
    );
    expect(header).toContain('secret from SVC_MAIL_WEBHOOK_SECRET');
    expect(header).toContain('secret from --secret');
    expect(handled).toContainEqual(expect.objectContaining({ service: 'mail', event: 'delivered' }));

    // The CRM forward has another secret than the app: refused, its code streamed, then retried.
    await run.waitForLine(attemptLine('crm', 'contact.created', '#1', '401 signature_mismatch'));
    await run.waitForLine(attemptLine('crm', 'contact.created', '#3', '401 signature_mismatch'));
    const out = run.lines.join('\n');
    expect(out).toContain('The signature does not match the body for any configured secret.');
    expect(out.match(/export SVC_CRM_WEBHOOK_SECRET before starting the app and the emulator/g)).toHaveLength(
      1,
    );
    expect(handled.some((h) => h.service === 'crm')).toBe(false);
    for (const secret of [MAIL_SECRET, WRONG_CRM_SECRET]) expect(out + run.stderr()).not.toContain(secret);
  });

  it('streams each delivery that `trigger` makes happen, the app handling it once', async () => {
    const trigger = await runCli(cli, ['trigger', 'mail', 'bounced', '--emulator', emulatorUrl]);
    expect(trigger.code).toBe(0);
    const line = await run.waitForLine(attemptLine('mail', 'bounced', '#1', '200'));
    const deliveryId = /[0-9a-f-]{36}/.exec(line)![0];
    expect(handled).toContainEqual({ service: 'mail', event: 'bounced', deliveryId });
  });

  it('keeps an answer to one short line on the terminal, however large the body', async () => {
    const big = await listen(
      createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(500).end(`${'x'.repeat(200_000)}\n\u001b[2Jend`));
      }),
    );
    const added = await fetch(`${emulatorUrl}/_emulator/webhooks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ service: 'mail', url: `${big}/hooks`, events: ['opened'] }),
    });
    expect(added.status).toBe(201);
    await runCli(cli, ['trigger', 'mail', 'opened', '--emulator', emulatorUrl]);
    const line = await run.waitForLine(attemptLine('mail', 'opened', '#1', '500'));
    const detail = run.lines[run.lines.indexOf(line) + 1]!;
    expect(detail).toMatch(/^ {10}body: x+…$/);
    expect(detail.length).toBeLessThan(200);
    expect(run.lines.join('\n')).not.toContain('\u001b');
  });

  it('stops on SIGINT: exit 0, nothing more printed', async () => {
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toBe('');
  });
});

describe('emulate --forward without a secret', () => {
  it('generates one, prints it once, and an app started with it gets verified deliveries', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    const closed = await new Promise<string>((r) =>
      probe.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(probe.address() as AddressInfo).port}`)),
    );
    await new Promise((r) => probe.close(r));
    const run = startCli(cli, ['emulate', '--port', '0', '--json', '--forward', `mail=${closed}/unused`]);
    try {
      await run.waitForLine(/"type":"listening"/);
      const first = JSON.parse(run.lines[0]!) as {
        url: string;
        forwards: Array<{ service: string; webhookId: string; secretFrom: string; secret: string }>;
      };
      const [forward] = first.forwards;
      expect(forward).toMatchObject({ service: 'mail', secretFrom: 'generated' });
      expect(forward!.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
      // The check went to a closed port: a network error, streamed with its cause.
      const refused = JSON.parse(await run.waitForLine(/"kind":"test"/)) as Record<string, unknown>;
      expect(refused).toMatchObject({ statusCode: 0, success: false });
      expect(String(refused.error)).toContain('ECONNREFUSED');

      // An app with the printed secret, on the URL the webhook now points at.
      const app = await startApp(forward!.secret, CRM_SECRET);
      const base = first.url.replace(/\/$/, '');
      const patched = await fetch(`${base}/api/v1/webhooks/${forward!.webhookId}`, {
        method: 'PATCH',
        headers: { 'X-API-Key': 'zm_live_test_admin', 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `${app}/webhooks/mail` }),
      });
      expect(patched.status).toBe(200);
      const trigger = await runCli(cli, ['trigger', 'mail', 'clicked', '--emulator', base, '--json']);
      expect(trigger.code).toBe(0);
      const line = JSON.parse(await run.waitForLine(/"event":"clicked"/)) as Record<string, unknown>;
      expect(line).toMatchObject({ statusCode: 200, errorCode: null, attempt: 1 });
      // Printed once: in the first line only.
      expect(run.lines.filter((l) => l.includes(forward!.secret))).toHaveLength(1);
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    }
  });

  it('signs with the secret from the environment: the signature is its HMAC over the exact body', async () => {
    const received: Array<{ sig: string; body: string }> = [];
    const url = await listen(
      createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8').on('data', (c: string) => {
          body += c;
        });
        req.on('end', () => {
          received.push({ sig: String(req.headers['x-svc-signature']), body });
          res.writeHead(200).end();
        });
      }),
    );
    const run = startCli(cli, ['emulate', '--port', '0', '--json', '--forward', `crm=${url}/crm`], {
      env: { SVC_CRM_WEBHOOK_SECRET: CRM_SECRET },
    });
    try {
      await run.waitForLine(/"event":"contact\.created".*"statusCode":200/);
      expect(received).toHaveLength(1);
      const expected = createHmac('sha256', CRM_SECRET).update(received[0]!.body).digest('hex');
      expect(received[0]!.sig).toBe(`sha256=${expected}`);
      expect(run.lines.join('\n')).not.toContain(CRM_SECRET);
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    }
  });
});

describe('emulate --forward --no-check', () => {
  it('sends nothing at start: the only delivery is the one triggered', async () => {
    const app = await startApp(MAIL_SECRET, CRM_SECRET);
    const run = startCli(
      cli,
      ['emulate', '--port', '0', '--json', '--no-check', '--forward', `mail=${app}/webhooks/mail`],
      {
        env: { SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET },
      },
    );
    try {
      await run.waitForLine(/"type":"listening"/);
      const base = (JSON.parse(run.lines[0]!) as { url: string }).url.replace(/\/$/, '');
      expect((await runCli(cli, ['trigger', 'mail', 'bounced', '--emulator', base])).code).toBe(0);
      const state = (await (await fetch(`${base}/_emulator/state`)).json()) as {
        deliveries: Array<{ event: string; test: boolean }>;
      };
      expect(state.deliveries.map((d) => d.event)).toEqual(['bounced']);
    } finally {
      run.child.kill('SIGTERM');
      expect(await run.exited).toBe(0);
    }
  });
});

describe('emulate --forward refuses bad options before it starts (exit 2)', () => {
  it.each([
    [['--forward', 'sms=http://127.0.0.1:3000/x'], 'Unknown service "sms"'],
    [['--forward', 'mail'], '--forward "mail" is not service=value'],
    [['--forward', 'mail=ftp://127.0.0.1/x'], '--forward mail must be http or https'],
    [
      ['--forward', 'mail=http://127.0.0.1:3000/x', '--secret', 'crm=whsec_0123456789abcdef'],
      'without --forward crm',
    ],
    [['--forward', 'mail=http://user:pw@127.0.0.1:3000/x'], '--forward:'],
  ])('%j', async (args, message) => {
    const run = await runCli(cli, ['emulate', '--port', '0', ...args], { timeoutMs: 15_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it('a secret no receiver accepts, named by where it came from and never echoed', async () => {
    const run = await runCli(cli, ['emulate', '--port', '0', '--forward', 'mail=http://127.0.0.1:3000/x'], {
      env: { SVC_MAIL_WEBHOOK_SECRET: 'short_secret' },
      timeoutMs: 15_000,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SVC_MAIL_WEBHOOK_SECRET (mail): the webhook secret is shorter than 16');
    expect(run.stderr + run.stdout).not.toContain('short_secret');
  });
});
