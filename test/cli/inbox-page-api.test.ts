/**
 * `svc-webhooks inbox serve` as a process (the built bin) against a real SQLite file and a real
 * PostgreSQL: its routes, the protections of a local page (Host check against DNS rebinding, JSON-only
 * writes and a foreign Origin refused against CSRF, bounded bodies, pages and filters, a strict CSP)
 * and rows whose event name, body and last error are hostile, answered as JSON data.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Inbox } from '@svc/webhooks/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InboxDatabase, postgresDatabase, sqliteDatabase, uniqueTable } from '../inbox/support.js';
import { type PostgresServer, startPostgres } from '../support/servers.js';
import { buildCli, runCli } from './support/cli.js';
import {
  HOSTILE_BODY,
  HOSTILE_ERROR,
  HOSTILE_EVENT,
  MAIL_ROWS,
  type RunningInboxPage,
  seedPageRows,
  startInboxServe,
} from './support/inbox-page.js';

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON answers, read field by field
type Json = Record<string, any>;

let cli: string;
let postgres: PostgresServer | undefined;

beforeAll(async () => {
  [cli, postgres] = await Promise.all([buildCli(), startPostgres()]);
}, 180_000);
afterAll(() => postgres?.close());

/** A raw request, so the Host and Origin headers are exactly what a test says. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe.each(['sqlite', 'postgres'] as const)('inbox serve on %s', (name) => {
  let db: InboxDatabase;
  let inbox: Inbox;
  let page: RunningInboxPage;
  let ids: { dead: number; hostile: number };
  const table = uniqueTable('page');
  const get = async (path: string) => {
    const response = await fetch(`${page.url}${path.replace(/^\//, '')}`);
    return { status: response.status, body: (await response.json()) as Json };
  };
  const post = async (body: unknown) => {
    const response = await fetch(`${page.url}api/redrive`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  beforeAll(async () => {
    db = name === 'sqlite' ? sqliteDatabase() : postgresDatabase(postgres!.connectionString);
    inbox = db.inbox({ table });
    ids = await seedPageRows(inbox, db.sql, table);
    const target =
      name === 'sqlite'
        ? ['--file', (db as InboxDatabase & { path: string }).path]
        : ['--database', postgres!.connectionString];
    page = await startInboxServe(cli, [...target, '--table', table]);
  }, 60_000);

  afterAll(async () => {
    await page?.stop();
    await inbox?.close();
    await db?.close();
  });

  it('serves the page on 127.0.0.1 under a strict CSP, with nothing from a row in its markup', async () => {
    expect(page.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await raw(page.url);
    expect(response.status).toBe(200);
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("form-action 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.body).not.toContain('m_page_');
    const target = await get('/api/target');
    expect(target.body.dialect).toBe(name);
  });

  it('refuses a foreign Host (DNS rebinding) on the page and the API', async () => {
    for (const path of ['', 'api/rows', 'api/target']) {
      const response = await raw(`${page.url}${path}`, {
        headers: { Host: `attacker.example:${page.port}` },
      });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.body).error.code).toBe('forbidden_host');
    }
    const local = await raw(`${page.url}api/rows`, { headers: { Host: `localhost:${page.port}` } });
    expect(local.status).toBe(200);
  });

  it('lists rows under each filter, newest first, a bounded page at a time', async () => {
    const first = await get('/api/rows?limit=25');
    expect(first.status).toBe(200);
    expect(first.body.rows).toHaveLength(25);
    const second = await get(`/api/rows?limit=25&before=${first.body.next}`);
    expect(second.body.next).toBeUndefined();
    const all = [...first.body.rows, ...second.body.rows].map((r: { id: number }) => r.id);
    expect(all).toHaveLength(MAIL_ROWS + 4);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual([...all].sort((a, b) => b - a));
    const count = async (query: string) => (await get(`/api/rows?limit=100&${query}`)).body.rows.length;
    expect(await count('status=quarantined')).toBe(2);
    expect(await count('status=dead')).toBe(2);
    expect(await count('service=crm')).toBe(2);
    expect(await count('event=delivered&service=mail')).toBe(MAIL_ROWS);
    expect(await count('key=crm%3Adeal%3Adeal_page')).toBe(1);
    expect(await count(`event=${encodeURIComponent(HOSTILE_EVENT)}`)).toBe(1);
  });

  it('refuses out-of-bounds pages and filters with 400 and a code', async () => {
    for (const query of [
      'limit=101',
      'limit=0',
      'limit=x',
      'before=-1',
      'status=lost',
      'service=sms',
      `event=${'e'.repeat(257)}`,
      `key=${'k'.repeat(257)}`,
      'event=deal.won%00',
    ]) {
      const response = await get(`/api/rows?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    }
    expect((await get('/api/rows/abc')).status).toBe(400);
    expect((await get('/api/rows/999999')).status).toBe(404);
    expect((await get('/api/nothing')).status).toBe(404);
  });

  it('answers a hostile row as JSON data: event, body and last error exactly as stored', async () => {
    const response = await raw(`${page.url}api/rows/${ids.hostile}`);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    // Bidi and C1 controls are \u escapes in the JSON text itself; the values parse back unchanged.
    expect(response.body).not.toContain('\u202e');
    expect(response.body).not.toContain('\u001b');
    expect(response.body).toContain('\\u202e');
    const { row } = JSON.parse(response.body);
    expect(row.event).toBe(HOSTILE_EVENT);
    expect(row.body).toBe(HOSTILE_BODY);
    expect(row.lastErrorMessage).toBe(HOSTILE_ERROR);
    expect(row.status).toBe('dead');
    const quarantined = (await get('/api/rows?status=quarantined')).body.rows[0];
    const detail = (await get(`/api/rows/${quarantined.id}`)).body.row;
    expect(detail.lastErrorCode).toBe('invalid_payload');
    expect(detail.headers['x-svcmail-event']).toBe('bounced');
    expect(JSON.parse(detail.body).event).toBe('bounced');
    expect(detail.bodyBytes).toBe(new TextEncoder().encode(detail.body).byteLength);
  });

  it('takes writes only as JSON POSTs from its own origin, bounded (CSRF)', async () => {
    const form = { method: 'POST', body: `id=${ids.dead}` };
    for (const type of [
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
    ]) {
      const response = await raw(`${page.url}api/redrive`, { ...form, headers: { 'Content-Type': type } });
      expect(response.status, type).toBe(415);
    }
    const json = { 'Content-Type': 'application/json' };
    const foreign = await raw(`${page.url}api/redrive`, {
      method: 'POST',
      headers: { ...json, Origin: 'http://attacker.example' },
      body: JSON.stringify({ id: ids.dead }),
    });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.code).toBe('forbidden_origin');
    const big = await raw(`${page.url}api/redrive`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ id: ids.dead, pad: 'x'.repeat(20_000) }),
    });
    expect(big.status).toBe(413);
    const broken = await raw(`${page.url}api/redrive`, { method: 'POST', headers: json, body: '{' });
    expect(broken.status).toBe(400);
    expect((await get('/api/redrive')).status).toBe(405);
    // None of them moved the row.
    expect((await inbox.show(ids.dead))!.status).toBe('dead');
  });

  it('re-drives one row, and a filtered set only with a filter and confirm: true', async () => {
    expect(await post({ id: ids.dead })).toEqual({ status: 200, body: { moved: 1 } });
    const moved = (await inbox.show(ids.dead))!;
    expect(moved).toMatchObject({ status: 'received', attempts: 0, lastErrorCode: null });
    expect((await post({ id: ids.dead })).body.moved).toBe(0); // received: nothing to move
    expect((await post({ filter: {}, confirm: true })).status).toBe(400);
    expect((await post({ filter: { status: 'quarantined' } })).status).toBe(400);
    expect((await post({ filter: { status: 'handled' }, confirm: true })).status).toBe(400);
    expect((await post({ filter: { status: 'bogus' }, confirm: true })).status).toBe(400);
    expect((await post([1])).status).toBe(400);
    expect((await inbox.list({ status: 'quarantined' })).rows).toHaveLength(2);
    expect(await post({ filter: { status: 'quarantined', service: 'mail' }, confirm: true })).toEqual({
      status: 200,
      body: { moved: 2 },
    });
    expect((await inbox.list({ status: 'quarantined' })).rows).toHaveLength(0);
  });
});

describe('inbox serve: a target it cannot use', () => {
  it('fails before listening: no file, no table (exit 2 with the code)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-inbox-page-'));
    try {
      const missing = await runCli(cli, [
        'inbox',
        'serve',
        '--port',
        '0',
        '--file',
        join(dir, 'none.sqlite'),
      ]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('No SQLite file');
      const db = sqliteDatabase();
      await db.sql('CREATE TABLE other (id INTEGER)');
      const noTable = await runCli(cli, ['inbox', 'serve', '--port', '0', '--json', '--file', db.path]);
      expect(noTable.code).toBe(2);
      expect(JSON.parse(noTable.stdout).error.code).toBe('inbox_table_missing');
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
