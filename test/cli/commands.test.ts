/**
 * The built `svc-webhooks` bin, run as a subprocess on the oldest supported Node, against real local
 * servers: the Express example app (with its capture file) and plain node:http servers.
 */
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { crmEnvelopeSchemas, mailPayloadSchemas } from '@svc/webhooks/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachable } from '../package/graph.js';
import {
  buildCli,
  RUN_LIMIT_MS,
  runCli,
  startExampleApp,
  supportedNode,
  supportedNodeMajor,
} from './support/cli.js';

const MAIL_SECRET = 'whsec_cli_mail_secret_0123456789';
const CRM_SECRET = 'whsec_cli_crm_secret_0123456789';
const sign = (body: string | Buffer, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

let cli: string;
let dir: string;
let app: Server;
let appUrl: string;
const handled: string[] = [];
const captureFile = () => join(dir, 'captures.ndjson');

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await listen(server);
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  ({ server: app, url: appUrl } = await startExampleApp({
    mailSecret: MAIL_SECRET,
    crmSecret: CRM_SECRET,
    print: (line) => handled.push(line),
    captureFile: captureFile(),
  }));
});

afterAll(async () => {
  await new Promise((r) => app?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('the bin', () => {
  it('runs on the oldest supported Node', () => {
    expect(supportedNodeMajor).toBeGreaterThanOrEqual(20);
  });

  it('imports only node: builtins and its declared dependencies (commander, zod)', () => {
    // The bin imports the library's chunks beside it; what counts is everything it reaches.
    const { files, external } = reachable(dirname(cli), [basename(cli)]);
    expect(files.size).toBeGreaterThan(1);
    expect(external).toContain('commander');
    // A subpath (`zod/mini`) belongs to its package.
    const packageOf = (id: string) =>
      id
        .split('/')
        .slice(0, id.startsWith('@') ? 2 : 1)
        .join('/');
    expect(
      [...external].filter((id) => !id.startsWith('node:') && !['commander', 'zod'].includes(packageOf(id))),
    ).toEqual([]);
  });

  it('prints --help for every command and exits 0', async () => {
    for (const command of ['send', 'verify', 'replay', 'emulate', 'trigger', 'fixtures']) {
      const run = await runCli(cli, [command, '--help']);
      expect(run.code, command).toBe(0);
      expect(run.stdout).toContain(`Usage: svc-webhooks ${command}`);
      expect(run.stdout).toContain('--json');
    }
  });

  it('colours only on a terminal: none when piped, unless FORCE_COLOR; never with NO_COLOR', async () => {
    const args = ['send', 'mail', 'opened', '--url', `${appUrl}/webhooks/mail`, '--secret', MAIL_SECRET];
    const ESC = '\u001b[';
    expect((await runCli(cli, args, { env: { NO_COLOR: undefined } })).stdout).not.toContain(ESC);
    expect((await runCli(cli, args, { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } })).stdout).toContain(
      `${ESC}32m200`,
    );
    expect((await runCli(cli, args, { env: { NO_COLOR: '1', FORCE_COLOR: '1' } })).stdout).not.toContain(ESC);
  });

  // util-linux `script` gives the command a terminal (stdout and stderr), as a shell user has.
  it.skipIf(!existsSync('/usr/bin/script'))(
    'on a terminal: colours and a progress bar for long work',
    async () => {
      const command = [
        supportedNode,
        cli,
        'send',
        'mail',
        'opened',
        '--url',
        `${appUrl}/webhooks/mail`,
        '--secret',
        MAIL_SECRET,
        '--times',
        '5',
      ]
        .map((part) => `'${part}'`)
        .join(' ');
      const run = await new Promise<string>((resolve) => {
        const env = { ...process.env };
        delete env.NO_COLOR;
        execFile('/usr/bin/script', ['-qec', command, '/dev/null'], { env }, (_error, stdout) =>
          resolve(stdout),
        );
      });
      expect(run).toContain('sending opened [');
      expect(run).toContain('5/5');
      expect(run).toContain('5 sent: 5 succeeded (5 × 200)');
    },
  );

  it('exits 2 on an unknown option or command', async () => {
    expect((await runCli(cli, ['send', 'mail', 'bounced', '--nope'])).code).toBe(2);
    expect((await runCli(cli, ['nope'])).code).toBe(2);
  });
});

describe('fixtures', () => {
  // What each service's fixtures are checked against, and the flags of its run.
  const services: Array<
    [string, Record<string, { safeParse(value: unknown): { success: boolean } }>, string[]]
  > = [
    ['mail', mailPayloadSchemas, []],
    ['crm', crmEnvelopeSchemas, ['--json']],
  ];
  it(
    'prints a schema-valid payload of every event',
    async () => {
      for (const [service, schemas, flags] of services) {
        for (const [event, schema] of Object.entries(schemas)) {
          const run = await runCli(cli, ['fixtures', service, event, ...flags]);
          expect(run.code, event).toBe(0);
          expect(schema.safeParse(JSON.parse(run.stdout)).success, event).toBe(true);
        }
      }
    },
    // One process per event, one after another: each start may take seconds on a loaded machine,
    // so the test's limit is that of its runs together, not the default 30 s.
    services.reduce((n, [, schemas]) => n + Object.keys(schemas).length, 0) * RUN_LIMIT_MS,
  );

  it('applies --set with JSON values and removes a field set empty', async () => {
    const run = await runCli(cli, [
      'fixtures',
      'crm',
      'deal.won',
      '--set',
      'value=5000',
      '--set',
      'title=Big deal',
    ]);
    expect(JSON.parse(run.stdout).data).toMatchObject({ value: 5000, title: 'Big deal' });
    const removed = await runCli(cli, ['fixtures', 'mail', 'delivered', '--set', 'provider=']);
    expect(JSON.parse(removed.stdout)).not.toHaveProperty('provider');
  });

  it('refuses an unknown event with the list of events (exit 2)', async () => {
    const run = await runCli(cli, ['fixtures', 'mail', 'exploded']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Unknown mail event "exploded"');
    expect(run.stderr).toContain('bounced');
  });
});

describe('send', () => {
  it('delivers a signed email event to the example app and prints the answer', async () => {
    const run = await runCli(cli, [
      'send',
      'mail',
      'bounced',
      '--url',
      `${appUrl}/webhooks/mail`,
      '--secret',
      MAIL_SECRET,
      '--set',
      'to=ana@example.com',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^200 bounced /);
    expect(handled.some((l) => JSON.parse(l).event === 'bounced')).toBe(true);
  });

  it('takes the secret from the environment and answers --json', async () => {
    const run = await runCli(cli, ['send', 'crm', 'deal.won', '--url', `${appUrl}/webhooks/crm`, '--json'], {
      env: { SVC_CRM_WEBHOOK_SECRET: CRM_SECRET },
    });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ ok: true, service: 'crm', event: 'deal.won', sent: 1, succeeded: 1 });
    expect(result.results[0].status).toBe(200);
  });

  it("exits 1 and prints the app's refusal when the secret is wrong", async () => {
    const run = await runCli(cli, [
      'send',
      'mail',
      'opened',
      '--url',
      `${appUrl}/webhooks/mail`,
      '--secret',
      'whsec_wrong',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^401 opened/);
    expect(run.stdout).toContain('signature_mismatch');
  });

  it('exits 2 with the fix when no secret is given, without sending', async () => {
    const run = await runCli(cli, ['send', 'mail', 'opened', '--url', `${appUrl}/webhooks/mail`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No mail webhook secret');
    expect(run.stderr).toContain('SVC_MAIL_WEBHOOK_SECRET');
  });

  it('exits 3 when the URL refuses the connection', async () => {
    const port = await closedPort();
    const run = await runCli(cli, [
      'send',
      'mail',
      'opened',
      '--url',
      `http://127.0.0.1:${port}/x`,
      '--secret',
      MAIL_SECRET,
      '--json',
    ]);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, sent: 0, error: { code: 'unreachable' } });
    expect(JSON.parse(run.stdout).error.message).toContain('ECONNREFUSED');
  });

  it('reports a 429 storm: every answer counted, exit 1', async () => {
    let hits = 0;
    const limited = createServer((_req, res) => {
      hits++;
      res.writeHead(429, { 'Retry-After': '60', 'Content-Type': 'application/json' });
      res.end('{"error":"slow down"}');
    });
    const url = await listen(limited);
    try {
      const run = await runCli(cli, [
        'send',
        'crm',
        'contact.created',
        '--url',
        url,
        '--secret',
        CRM_SECRET,
        '--times',
        '25',
        '--json',
      ]);
      expect(run.code).toBe(1);
      const result = JSON.parse(run.stdout);
      expect(result).toMatchObject({ ok: false, sent: 25, succeeded: 0, byStatus: { 429: 25 } });
      expect(hits).toBe(25);
      const text = await runCli(cli, [
        'send',
        'crm',
        'contact.created',
        '--url',
        url,
        '--secret',
        CRM_SECRET,
        '--times',
        '3',
      ]);
      expect(text.stdout).toContain('3 sent: 0 succeeded (3 × 429)');
    } finally {
      await new Promise((r) => limited.close(r));
    }
  });

  it('--same-id repeats one delivery: the example app handles it once', async () => {
    const before = handled.length;
    const run = await runCli(cli, [
      'send',
      'crm',
      'contact.updated',
      '--url',
      `${appUrl}/webhooks/crm`,
      '--secret',
      CRM_SECRET,
      '--times',
      '3',
      '--same-id',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const ids = new Set(JSON.parse(run.stdout).results.map((r: { deliveryId: string }) => r.deliveryId));
    expect(ids.size).toBe(1);
    expect(handled.length - before).toBe(1);
  });
});

describe('verify', () => {
  const body = JSON.stringify({
    event: 'opened',
    client_id: 'c_1',
    message_id: 'm_1',
    to: 'ana@example.com',
    timestamp: '2026-01-02T03:04:05.678Z',
  });
  const headersFor = (signature: string) =>
    `POST /webhooks/mail HTTP/1.1\nContent-Type: application/json\nX-SvcMAIL-Event: opened\nX-SvcMAIL-Sig: ${signature}\nX-SvcMAIL-Id: d_1\n`;

  it('says which secret matched (the second of a rotation)', async () => {
    writeFileSync(join(dir, 'body.json'), body);
    writeFileSync(join(dir, 'headers.txt'), headersFor(sign(body, MAIL_SECRET)));
    const run = await runCli(cli, [
      'verify',
      '--service',
      'mail',
      '--secret',
      'whsec_new_one_after_rotation',
      '--secret',
      MAIL_SECRET,
      '--headers',
      join(dir, 'headers.txt'),
      join(dir, 'body.json'),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('signature matched secret #2 of 2');
    expect(run.stdout).toContain('mail opened, delivery d_1');
  });

  it('reads the body from stdin and JSON headers', async () => {
    writeFileSync(
      join(dir, 'headers.json'),
      JSON.stringify({
        'x-svcmail-event': 'opened',
        'x-svcmail-sig': sign(body, MAIL_SECRET),
        'x-svcmail-id': 'd_1',
      }),
    );
    const run = await runCli(
      cli,
      ['verify', '--service', 'mail', '--headers', join(dir, 'headers.json'), '--json', '-'],
      {
        input: body,
        env: { SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET },
      },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      secret: { index: 1, of: 1 },
      event: 'opened',
      deliveryId: 'd_1',
    });
  });

  it('a changed byte: exit 1 with signature_mismatch and its fix, never the secret', async () => {
    writeFileSync(join(dir, 'body.json'), `${body}\n`);
    writeFileSync(join(dir, 'headers.txt'), headersFor(sign(body, MAIL_SECRET)));
    const run = await runCli(cli, [
      'verify',
      '--service',
      'mail',
      '--secret',
      MAIL_SECRET,
      '--headers',
      join(dir, 'headers.txt'),
      join(dir, 'body.json'),
      '--json',
    ]);
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result.error.code).toBe('signature_mismatch');
    expect(result.error.fix).toContain('exact bytes');
    expect(run.stdout + run.stderr).not.toContain(MAIL_SECRET);
  });

  it('no signature header: signature_missing; a bad payload after a good signature: invalid_payload', async () => {
    writeFileSync(join(dir, 'body.json'), body);
    const missing = await runCli(cli, [
      'verify',
      '--service',
      'mail',
      '--secret',
      MAIL_SECRET,
      join(dir, 'body.json'),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('signature_missing');
    const bad = JSON.stringify({
      id: '6f1c2a8e-4b7d-4e0a-9c3f-2d5e8b1a7c90',
      event: 'deal.won',
      timestamp: 'yesterday',
      tenant_id: 't',
      data: {},
    });
    writeFileSync(join(dir, 'bad.json'), bad);
    writeFileSync(
      join(dir, 'crm-headers.txt'),
      `X-Svc-Signature: ${sign(bad, CRM_SECRET)}\nX-Svc-Event: deal.won\nX-Svc-Delivery: 6f1c2a8e-4b7d-4e0a-9c3f-2d5e8b1a7c90\n`,
    );
    const invalid = await runCli(cli, [
      'verify',
      '--service',
      'crm',
      '--secret',
      CRM_SECRET,
      '--headers',
      join(dir, 'crm-headers.txt'),
      join(dir, 'bad.json'),
    ]);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toContain('ok signature matched secret #1 of 1');
    expect(invalid.stdout).toContain('invalid_payload');
  });

  it('exits 2 for a missing secret, an unreadable file or a malformed headers file', async () => {
    expect((await runCli(cli, ['verify', '--service', 'crm', join(dir, 'body.json')])).code).toBe(2);
    const missing = await runCli(cli, [
      'verify',
      '--service',
      'crm',
      '--secret',
      CRM_SECRET,
      join(dir, 'nope.json'),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
    writeFileSync(join(dir, 'broken.txt'), 'this is not a header\n');
    const broken = await runCli(cli, [
      'verify',
      '--service',
      'crm',
      '--secret',
      CRM_SECRET,
      '--headers',
      join(dir, 'broken.txt'),
      join(dir, 'body.json'),
    ]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('line 1 is not "Name: value"');
  });
});

describe('replay and the capture hook', () => {
  it('the capture file holds the exact bytes and headers, never the secret; replay re-sends them', async () => {
    rmSync(captureFile(), { force: true });
    const send = await runCli(cli, [
      'send',
      'mail',
      'clicked',
      '--url',
      `${appUrl}/webhooks/mail`,
      '--secret',
      MAIL_SECRET,
      '--json',
    ]);
    expect(send.code).toBe(0);
    const text = readFileSync(captureFile(), 'utf8');
    expect(text).not.toContain(MAIL_SECRET);
    const [line] = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const bytes = Buffer.from(line.body, 'base64');
    expect(line).toMatchObject({ v: 1, service: 'mail' });
    // The captured signature is the HMAC of the captured bytes: they are the exact bytes sent.
    expect(line.headers['x-svcmail-sig']).toBe(sign(bytes, MAIL_SECRET));
    expect(line.headers['x-svcmail-id']).toBe(JSON.parse(send.stdout).results[0].deliveryId);

    // Replayed to a recording server: same bytes, same delivery headers.
    const received: Array<{ headers: Record<string, unknown>; body: Buffer }> = [];
    const recorder = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.end('ok');
      });
    });
    const url = await listen(recorder);
    try {
      const run = await runCli(cli, ['replay', captureFile(), '--url', url]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^200 line 1 \(mail/);
      expect(received[0]!.body.equals(bytes)).toBe(true);
      for (const name of ['x-svcmail-sig', 'x-svcmail-id', 'x-svcmail-event', 'content-type']) {
        expect(received[0]!.headers[name]).toBe(line.headers[name]);
      }
    } finally {
      await new Promise((r) => recorder.close(r));
    }

    // Replayed to the app itself: verified, and recognised as a duplicate (handled once).
    const before = handled.length;
    const again = await runCli(cli, ['replay', captureFile(), '--url', `${appUrl}/webhooks/mail`, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, replayed: 1 });
    expect(handled.length).toBe(before);
  });

  it('verify --capture checks the lines of a capture file; the service comes from the capture', async () => {
    const ok = await runCli(cli, ['verify', '--capture', captureFile(), '--secret', MAIL_SECRET, '--json']);
    expect(ok.code).toBe(0);
    const checked = JSON.parse(ok.stdout);
    // The send and its replay to the app: both captured, both verify.
    expect(checked.ok).toBe(true);
    expect(checked.results.length).toBeGreaterThanOrEqual(2);
    expect(checked.results[0]).toMatchObject({
      line: 1,
      service: 'mail',
      secret: { index: 1, of: 1 },
      event: 'clicked',
    });
    const wrong = await runCli(cli, [
      'verify',
      '--capture',
      captureFile(),
      '--line',
      '1',
      '--secret',
      'whsec_other_webhook_secret',
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('line 1 (mail, received ');
    expect(wrong.stdout).toContain('signature_mismatch');
    // The same bytes as separate body and headers files.
    const [line] = readFileSync(captureFile(), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    writeFileSync(join(dir, 'cap-body'), Buffer.from(line.body, 'base64'));
    writeFileSync(join(dir, 'cap-headers.json'), JSON.stringify(line.headers));
    const files = await runCli(cli, [
      'verify',
      '--service',
      'mail',
      '--secret',
      MAIL_SECRET,
      '--headers',
      join(dir, 'cap-headers.json'),
      join(dir, 'cap-body'),
    ]);
    expect(files.code).toBe(0);
  });

  it('a bad capture file: exit 2 naming the line and what is wrong', async () => {
    const cases: Array<[string, string]> = [
      ['not json\n', ':1: not a JSON line'],
      [`${JSON.stringify({ v: 2, service: 'mail', headers: {}, body: '' })}\n`, 'unknown format version 2'],
      [`${JSON.stringify({ v: 1, service: 'sms', headers: {}, body: '' })}\n`, '"service" must be'],
      [
        `\n${JSON.stringify({ v: 1, service: 'mail', headers: {}, body: '%%%' })}\n`,
        ':2: "body" must be the base64',
      ],
      [
        `${JSON.stringify({ v: 1, service: 'mail', headers: { a: 1 }, body: '' })}\n`,
        'header "a" must be a string',
      ],
      ['\n\n', 'no captures in the file'],
    ];
    for (const [content, message] of cases) {
      writeFileSync(join(dir, 'bad.ndjson'), content);
      const run = await runCli(cli, ['replay', join(dir, 'bad.ndjson'), '--url', appUrl]);
      expect(run.code, message).toBe(2);
      expect(run.stderr, message).toContain(message);
    }
    const missing = await runCli(cli, ['replay', join(dir, 'absent.ndjson'), '--url', appUrl]);
    expect(missing.code).toBe(2);
  });

  it('replay to a refusing URL exits 3', async () => {
    const port = await closedPort();
    const run = await runCli(cli, ['replay', captureFile(), '--url', `http://127.0.0.1:${port}/`]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('ECONNREFUSED');
  });
});
