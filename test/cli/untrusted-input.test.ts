/**
 * The built bin reading hostile files: inputs are read with a bound as they stream (an endless
 * /dev/zero or FIFO ends at 16 MiB), a malformed capture is exit 2, and text from files reaches the
 * terminal with its control characters shown as escapes.
 */
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli } from './support/cli.js';

const SECRET = 'whsec_untrusted_input_secret_01';
// Any C0 control but \n, DEL, any C1 control: none may reach stdout or stderr raw.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters under test
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

let cli: string;
let dir: string;

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-untrusted-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const captureLine = (fields: Record<string, unknown>) =>
  `${JSON.stringify({ v: 1, service: 'mail', receivedAt: '2026-01-01T00:00:00.000Z', headers: {}, body: '', ...fields })}\n`;

describe('inputs are read with a bound as they stream', () => {
  it.skipIf(!existsSync('/dev/zero'))(
    'verify --capture /dev/zero stops at 16 MiB: exit 2, the documented error',
    async () => {
      const started = performance.now();
      const run = await runCli(cli, ['verify', '--capture', '/dev/zero', '--secret', SECRET], {
        timeoutMs: 20_000,
      });
      const seconds = (performance.now() - started) / 1000;
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('capture file /dev/zero is larger than 16 MiB');
      // Killed after 20 s otherwise (code null above); a bounded read takes well under a second.
      expect(seconds).toBeLessThan(10);
    },
  );

  it.skipIf(!existsSync('/usr/bin/mkfifo'))(
    'a FIFO that never ends: the body read stops at 16 MiB and closes it (the writer sees EPIPE)',
    async () => {
      const fifo = join(dir, 'endless');
      execFileSync('/usr/bin/mkfifo', [fifo]);
      const writer = createWriteStream(fifo);
      const chunk = Buffer.alloc(1 << 16, 0x61);
      let written = 0;
      const closed = new Promise<string>((resolve) => {
        writer.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
        const pump = () => {
          while (written < 1 << 30) {
            written += chunk.length;
            if (!writer.write(chunk)) return void writer.once('drain', pump);
          }
          resolve('wrote 1 GiB');
        };
        writer.once('open', pump);
      });
      const run = await runCli(cli, ['verify', '--service', 'mail', '--secret', SECRET, fifo], {
        timeoutMs: 20_000,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`body ${fifo} is larger than 16 MiB`);
      expect(await closed).toBe('EPIPE');
      writer.destroy();
      expect(written).toBeLessThan(64 * 1_048_576);
    },
  );
});

describe('a malformed capture is exit 2 (docs/cli.md), whatever the command', () => {
  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['a header name with a space', { headers: { 'bad name': 'x' } }, 'header "bad name" is not a valid'],
    ['a header value with a line break', { headers: { 'x-a': 'one\ntwo' } }, 'header "x-a" is not a valid'],
    [
      'a header value past Latin-1',
      { headers: { 'x-a': 'caf\u00e9 \u2603' } },
      'header "x-a" is not a valid',
    ],
  ];
  it.each(bad)(
    '%s: verify and replay exit 2 naming the line; nothing is sent',
    async (_, fields, message) => {
      const file = join(dir, 'bad-headers.ndjson');
      writeFileSync(file, captureLine(fields));
      const verify = await runCli(cli, ['verify', '--capture', file, '--secret', SECRET]);
      expect(verify.code).toBe(2);
      expect(verify.stderr).toContain(`${file}:1: ${message}`);
      // Port 9 (discard) is never reached: the file is refused before any request.
      const replay = await runCli(cli, ['replay', file, '--url', 'http://127.0.0.1:9/']);
      expect(replay.code).toBe(2);
      expect(replay.stderr).toContain(`${file}:1: ${message}`);
    },
  );
});

describe('text from files is escaped before it reaches the terminal', () => {
  const hostile = '\u001b]0;owned\u0007\u001b[2J\r\u009b31m';
  const shown = '\\x1b]0;owned\\x07\\x1b[2J\\r\\x9b31m';
  // A header value may hold any control but CR, LF and NUL.
  const inHeader = '\u001b]0;owned\u0007\u001b[2J\u009b31m';

  it('verify --capture: receivedAt, header names in errors, the event from a header', async () => {
    const body = JSON.stringify({ message_id: 'm_1', to: 'ana@example.com' });
    const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const file = join(dir, 'escapes.ndjson');
    writeFileSync(
      file,
      captureLine({
        receivedAt: hostile,
        headers: {
          'x-svcmail-sig': sig,
          'x-svcmail-id': 'd_1',
          'x-svcmail-event': `opened${inHeader}`,
          'content-type': 'application/json',
        },
        body: Buffer.from(body).toString('base64'),
      }),
    );
    const run = await runCli(cli, ['verify', '--capture', file, '--secret', SECRET]);
    expect(run.stdout + run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain(`(mail, received ${shown})`);

    writeFileSync(file, captureLine({ headers: { [`x-${hostile}`]: 1 } }));
    const refused = await runCli(cli, ['verify', '--capture', file, '--secret', SECRET]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).not.toMatch(RAW_CONTROL);
    expect(refused.stderr).toContain(`header "x-${shown}" must be a string`);

    // --json: C0 is JSON-escaped already; C1 and DEL are escaped too.
    writeFileSync(file, captureLine({ receivedAt: hostile, headers: {}, body: '' }));
    const json = await runCli(cli, ['verify', '--capture', file, '--secret', SECRET, '--json']);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(json.stdout).results).toHaveLength(1);
  });
});
