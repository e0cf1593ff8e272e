/**
 * The built bin against servers that misbehave on purpose (plain node:http on 127.0.0.1): redirects
 * to another origin, absurd rate-limit headers, endless paging, and escape sequences in every answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli } from './support/cli.js';

// The CLI's time limits of the calls below: `send` (src/cli/http.ts), `trigger`'s event call
// (src/cli/commands/trigger.ts) and the emulator's state that `recover --emulator` reads first.
const SEND_LIMIT_MS = 10_000;
const TRIGGER_LIMIT_MS = 30_000;
const EMULATOR_STATE_LIMIT_MS = 10_000;

const KEY = 'zm_live_hostile_test_key_value';
// Any C0 control but \n, DEL, any C1 control: none may reach stdout or stderr raw.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters under test
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const HOSTILE = '\u001b]0;owned\u0007\u001b[2J\r\u009b31m';
const SHOWN = '\\x1b]0;owned\\x07\\x1b[2J\\r\\x9b31m';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

let cli: string;
let route: Route = (_req, res) => res.end();
const seen: string[] = [];
const elsewhereSeen: IncomingMessage['headers'][] = [];
let server: Server;
let elsewhere: Server;
let api = '';
let other = '';

async function listen(s: Server): Promise<string> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));

beforeAll(async () => {
  cli = await buildCli();
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => route(req, res));
  });
  elsewhere = createServer((req, res) => {
    elsewhereSeen.push(req.headers);
    json(res, 200, { data: [] });
  });
  api = await listen(server);
  other = await listen(elsewhere);
});
afterAll(async () => {
  server?.closeAllConnections();
  elsewhere?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await new Promise((r) => elsewhere?.close(r));
});

const recover = (...extra: string[]) =>
  runCli(
    cli,
    ['recover', '--service', 'mail', '--since', '2h', '--base-url', api, '--api-key', KEY, ...extra],
    {
      timeoutMs: 30_000,
    },
  );

describe('recover against a hostile management API', () => {
  it('a 307 to another origin: nothing is sent there, exit 1 naming that origin (it exited 0 on its answers)', async () => {
    seen.length = 0;
    elsewhereSeen.length = 0;
    route = (_req, res) => res.writeHead(307, { Location: `${other}/api/v1/webhooks` }).end();
    const run = await recover('--json');
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stdout);
    expect(error.code).toBe('response_invalid');
    expect(error.message).toContain(`redirect to ${other}`);
    expect(elsewhereSeen).toEqual([]);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });

  it('Retry-After and X-RateLimit-Reset beyond the Date range: rate_limited, exit 1, no RangeError', async () => {
    const absurd: Record<string, string>[] = [
      { 'Retry-After': '9'.repeat(30) },
      { 'X-RateLimit-Reset': '9'.repeat(400) },
    ];
    for (const headers of absurd) {
      route = (_req, res) => json(res, 429, { error: { code: 'api_rate_limit_exceeded' } }, headers);
      const run = await recover('--json');
      expect(run.code, JSON.stringify(headers)).toBe(1);
      expect(JSON.parse(run.stdout).error.code).toBe('rate_limited');
      expect(run.stderr).not.toContain('RangeError');
    }
  });

  it('a --since beyond the range of a Date is bad usage (exit 2), not a RangeError', async () => {
    seen.length = 0;
    const run = await runCli(cli, [
      'recover',
      '--service',
      'mail',
      '--since',
      '99999999999d',
      '--base-url',
      api,
      '--api-key',
      KEY,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('since must be');
    expect(seen).toEqual([]);
  });

  it('a new cursor on every page: --max-pages stops it with page_limit_exceeded (it looped forever)', async () => {
    seen.length = 0;
    let page = 0;
    route = (req, res) => {
      if (req.url === '/api/v1/webhooks') return json(res, 200, [{ id: 'wh_1', url: 'https://h.example' }]);
      page++;
      json(res, 200, { data: [], next_cursor: `c${page}` });
    };
    const run = await recover('--max-pages', '3', '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error.code).toBe('page_limit_exceeded');
    expect(seen.filter((s) => s.includes('/deliveries'))).toHaveLength(3);
    expect((await recover('--max-pages', '0')).code).toBe(2);
  });

  it('escape sequences in error messages, webhook urls, events and reasons are shown escaped', async () => {
    route = (_req, res) => json(res, 401, { error: { code: 'unauthorized', message: `bad key ${HOSTILE}` } });
    const refused = await recover();
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toMatch(RAW_CONTROL);
    expect(refused.stderr).toContain(`bad key ${SHOWN}`);

    const at = new Date(Date.now() - 30 * 60_000).toISOString();
    route = (req, res) => {
      if (req.url === '/api/v1/webhooks') {
        return json(res, 200, [
          { id: `wh${HOSTILE}`, url: `https://h.example/${HOSTILE}`, status: 'active' },
        ]);
      }
      if (req.method === 'GET') {
        return json(res, 200, {
          data: [{ deliveryId: `d${HOSTILE}`, event: `bounced${HOSTILE}`, attemptedAt: at, statusCode: 500 }],
        });
      }
      json(res, 200, { success: false, statusCode: 500, error: `HTTP 500 ${HOSTILE}` });
    };
    const run = await recover();
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain(`https://h.example/${SHOWN}`);
    expect(run.stdout).toContain(`still failing d${SHOWN} (bounced${SHOWN}): 500 HTTP 500 ${SHOWN}`);
  });
});

describe('send prints the answer escaped and bounded', () => {
  it('a response body with escape sequences keeps its lines, shows its controls', async () => {
    route = (_req, res) =>
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`line one${HOSTILE}\nline two`);
    const run = await runCli(cli, [
      'send',
      'mail',
      'opened',
      '--url',
      `${api}/hooks`,
      '--secret',
      'whsec_hostile_api_secret_0123',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain(`line one${SHOWN}\nline two`);
  });

  it('an endless answer body is read up to a bound, then the connection is dropped', async () => {
    let sent = 0;
    route = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const chunk = Buffer.alloc(1 << 16, 0x7a);
      const pump = () => {
        while (!res.destroyed && sent < 1 << 30) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    };
    const started = performance.now();
    const run = await runCli(cli, [
      'send',
      'mail',
      'opened',
      '--url',
      `${api}/hooks`,
      '--secret',
      'whsec_hostile_api_secret_0123',
      '--json',
    ]);
    const seconds = (performance.now() - started) / 1000;
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).results[0].body).toMatch(/^z{4096}…$/);
    // Before its time limit: an unbounded read would have gone on until it (and read every byte that came).
    expect(seconds).toBeLessThan(SEND_LIMIT_MS / 1000);
    expect(sent).toBeLessThan(64 * 1_048_576);
  });
});

describe('trigger and recover --emulator against something that is not an emulator', () => {
  it('an endless answer is read up to 1 MiB: exit 1 at once, not a read until the time limit', async () => {
    route = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"deliveries":[');
      const chunk = Buffer.from('{},'.repeat(20_000));
      const pump = () => {
        while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', pump);
      };
      pump();
    };
    // Each run ends before its call's time limit, which an unbounded read would have run into.
    let started = performance.now();
    const trigger = await runCli(cli, ['trigger', 'mail', 'bounced', '--emulator', api]);
    expect(performance.now() - started).toBeLessThan(TRIGGER_LIMIT_MS);
    expect(trigger.code).toBe(1);
    expect(trigger.stderr).toContain('not an emulator');
    started = performance.now();
    const recovered = await runCli(cli, ['recover', '--service', 'mail', '--since', '1h', '--emulator', api]);
    expect(performance.now() - started).toBeLessThan(EMULATOR_STATE_LIMIT_MS);
    expect(recovered.code).toBe(1);
    expect(recovered.stderr).toContain('not an emulator');
  });
});
