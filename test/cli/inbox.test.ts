/**
 * `svc-webhooks inbox` as a subprocess (the built bin, on the oldest supported Node) against a real
 * SQLite file and a real PostgreSQL, with rows the real inbox stored: deliveries from the reference
 * emitters through receivers in inbox mode, one quarantined by the schema, one dead after a throwing
 * handler, handled ones (some handled ten days ago), and one whose ordering key holds escape sequences.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker, createPostgresInbox, type Inbox } from '@svc/webhooks/postgres';
import { createSqliteInbox } from '@svc/webhooks/sqlite';
import { createCrmEmitter, createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_SECRET, crmDelivery, deliver } from '../receivers/support.js';
import { type PostgresServer, startPostgres } from '../support/servers.js';
import { openRawSqlite } from '../support/sqlite.js';
import { buildCli, runCli } from './support/cli.js';

const DAY = 86_400_000;
/** A control character reaching the terminal raw (all but \n, which ends lines). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters under test
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const HOSTILE = 'm_\u001b[2J\u001b]0;pwned\u0007\r';

let cli: string;
let dir: string;
let server: PostgresServer | undefined;
let pool: pg.Pool | undefined;

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'svc-cli-inbox-'));
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: server.connectionString, max: 4 });
  pool.on('error', () => {});
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<[Server, string]> {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return [http, `http://127.0.0.1:${(http.address() as AddressInfo).port}/`];
}

/** Stores the rows: received by the real receivers and run by the real worker. Returns their ids. */
async function populate(inboxAt: (clock?: { now(): number }) => Inbox) {
  const inbox = inboxAt();
  await inbox.migrate();
  const clock = createVirtualClock();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 29, validate: false });
  const crm = createCrmEmitter({ clock, allowPrivateNetworks: true, seed: 29 });
  const handlers: {
    mail?: ReturnType<typeof createNodeListener>;
    crm?: ReturnType<typeof createNodeListener>;
  } = {};
  const [mailHttp, mailUrl] = await listen((req, res) => handlers.mail!(req, res));
  const [crmHttp, crmUrl] = await listen((req, res) => handlers.crm!(req, res));
  const mailHook = mail.createWebhook({ url: mailUrl, events: ['bounced', 'delivered'] });
  const crmHook = crm.createWebhook({ name: 'inbox cli', url: crmUrl, events: ['deal.won', 'deal.created'] });
  const logger = () => {};
  const crmState = { failing: true, runs: [] as string[] };
  // Mail rows are stored and handled on a clock ten days back: handled ten days ago.
  const past = inboxAt({ now: () => Date.now() - 10 * DAY });
  const mailReceiver = createMailReceiver({ secret: mailHook.secret, handoff: past, logger });
  const crmReceiver = createCrmReceiver({ secret: crmHook.secret, handoff: inbox, logger });
  handlers.mail = createNodeListener(mailReceiver);
  handlers.crm = createNodeListener(crmReceiver);
  try {
    const delivered = await mail.emit('delivered', { message_id: 'm_plain' });
    const hostile = await mail.emit('delivered', { message_id: HOSTILE });
    const quarantined = await mail.emit('bounced', { provider: undefined, message_id: 'm_bad' });
    const won = await crm.emit('deal.won', { deal_id: 'deal_dead' });
    const created = await crm.emit('deal.created', { deal_id: 'deal_ok' });
    await clock.runAll();
    for (const d of [delivered, hostile, quarantined, won, created])
      expect(d.flatMap((x) => x.attempts.map((a) => a.statusCode))).toEqual([200]);

    const handledMail: string[] = [];
    mailReceiver.on('delivered', (event) => void handledMail.push(event.deliveryId));
    expect(await createInboxWorker({ receiver: mailReceiver, inbox: past }).runOnce()).toBe(2);
    expect(handledMail).toHaveLength(2);
    // deal.won throws once: dead after its one attempt; deal.created is handled now.
    crmReceiver.on('deal.won', (event) => {
      if (crmState.failing) throw new Error('handler \u001b[31mfailed');
      crmState.runs.push(event.deliveryId);
    });
    crmReceiver.on('deal.created', () => {});
    await createInboxWorker({ receiver: crmReceiver, inbox, maxAttempts: 1 }).runOnce();
  } finally {
    await new Promise((r) => mailHttp.close(r));
    await new Promise((r) => crmHttp.close(r));
  }
  const ids = async (status: string) => (await inbox.list({ status: status as never })).rows.map((r) => r.id);
  expect((await ids('dead')).length).toBe(1);
  expect((await ids('quarantined')).length).toBe(1);
  expect((await ids('handled')).length).toBe(3);
  return { inbox, crmReceiver, crmState };
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe.each(['sqlite', 'postgres'] as const)('svc-webhooks inbox on %s', (name) => {
  let target: string[];
  let inbox: Inbox;
  let crmReceiver: ReturnType<typeof createCrmReceiver>;
  let crmState: { failing: boolean; runs: string[] };
  const run = (...args: string[]) => runCli(cli, ['inbox', ...args, ...target]);

  beforeAll(async () => {
    if (name === 'sqlite') {
      const path = join(dir, 'app.sqlite');
      target = ['--file', path];
      ({ inbox, crmReceiver, crmState } = await populate((clock) =>
        createSqliteInbox({ path, ...(clock ? { clock } : {}) }),
      ));
    } else {
      target = ['--database', server!.connectionString];
      ({ inbox, crmReceiver, crmState } = await populate((clock) =>
        createPostgresInbox({ client: pool!, ...(clock ? { clock } : {}) }),
      ));
    }
  }, 60_000);

  afterAll(() => inbox?.close());

  it('lists with each filter, as a table and as JSON lines, a bounded page at a time', async () => {
    const all = await run('list', '--json');
    expect(all.code).toBe(0);
    expect(lines(all.stdout).map((r) => r.event)).toEqual([
      'deal.created',
      'deal.won',
      'bounced',
      'delivered',
      'delivered',
    ]);
    const byFilter = async (...args: string[]) => lines((await run('list', '--json', ...args)).stdout);
    const [status, service, event, key, hostileKey] = await Promise.all([
      byFilter('--status', 'dead'),
      byFilter('--service', 'crm'),
      byFilter('--event', 'delivered'),
      byFilter('--key', 'crm:deal:deal_dead'),
      byFilter('--key', `mail:message:${HOSTILE}`),
    ]);
    expect(status.map((r) => r.event)).toEqual(['deal.won']);
    expect(service.map((r) => r.event)).toEqual(['deal.created', 'deal.won']);
    expect(event.map((r) => r.status)).toEqual(['handled', 'handled']);
    expect(key.map((r) => r.status)).toEqual(['dead']);
    expect(hostileKey.map((r) => r.event)).toEqual(['delivered']);

    const [page, hostile, bad] = await Promise.all([
      run('list', '--limit', '2'),
      run('list', '--event', 'delivered'),
      run('list', '--status', 'lost'),
    ]);
    expect(page.code).toBe(0);
    const rows = page.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^ID\s+STATUS\s+SERVICE\s+EVENT/);
    expect(rows).toHaveLength(3);
    expect(rows[2]).toMatch(/\bdead\s+crm\s+deal\.won\b/);
    const next = /--before (\d+)/.exec(page.stderr)?.[1];
    expect(next).toBeDefined();
    expect(lines((await run('list', '--json', '--before', next!)).stdout)).toHaveLength(3);

    expect(hostile.stdout).not.toMatch(RAW_CONTROL);
    expect(hostile.stdout).toContain('mail:message:m_\\x1b[2J\\x1b]0;pwned\\x07\\r');

    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown status "lost"');
  });

  it('shows one row with its last error, headers and body escaped, never raw control characters', async () => {
    const [hostileRow] = (await inbox.list({ orderingKey: `mail:message:${HOSTILE}` })).rows;
    const [dead] = (await inbox.list({ status: 'dead' })).rows;
    const [shown, deadShown, deadJson, missing, notAnId] = await Promise.all([
      run('show', String(hostileRow!.id)),
      run('show', String(dead!.id)),
      run('show', String(dead!.id), '--json'),
      run('show', '999999'),
      run('show', 'x1'),
    ]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(RAW_CONTROL);
    expect(shown.stdout).toContain('status        handled');
    expect(shown.stdout).toContain(`delivery id   ${hostileRow!.deliveryId}`);
    expect(shown.stdout).toContain('m_\\x1b[2J\\x1b]0;pwned\\x07\\r'); // key and body
    expect(shown.stdout).toMatch(/x-svcmail-event: delivered/i);

    expect(deadShown.stdout).toMatch(/last error\s+\S+: .*handler \\x1b\[31mfailed/);
    expect(deadShown.stdout).not.toContain('\u001b');

    const json = JSON.parse(deadJson.stdout);
    expect(json.row).toMatchObject({ id: dead!.id, event: 'deal.won', status: 'dead' });
    expect(JSON.parse(json.row.body).data.deal_id).toBe('deal_dead');

    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No row 999999');
    expect(notAnId.code).toBe(2);
  });

  it('re-drives a dead row by id (the worker then handles it once) and a quarantined one by filter', async () => {
    const [dead] = (await inbox.list({ status: 'dead' })).rows;
    const moved = await run('redrive', String(dead!.id));
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain('1 row moved back to received');
    expect((await inbox.show(dead!.id))!.status).toBe('received');
    crmState.failing = false;
    const worker = createInboxWorker({ receiver: crmReceiver, inbox });
    expect(await worker.runOnce()).toBe(1);
    expect(await worker.runOnce()).toBe(0);
    expect(crmState.runs).toEqual([dead!.deliveryId]);
    expect((await inbox.show(dead!.id))!.status).toBe('handled');

    const quarantined = await run('redrive', '--status', 'quarantined', '--event', 'bounced', '--json');
    expect(JSON.parse(quarantined.stdout)).toEqual({ ok: true, moved: 1 });
    expect((await inbox.list({ status: 'quarantined' })).rows).toHaveLength(0);

    const none = await run('redrive');
    expect(none.code).toBe(2);
    const handled = await run('redrive', '--status', 'handled');
    expect(handled.code).toBe(2);
    expect(handled.stderr).toContain('not re-driven');
  });

  it('purges only handled rows older than N days', async () => {
    const purged = await run('purge', '--older-than', '5');
    expect(purged.code).toBe(0);
    expect(purged.stdout).toContain('2 rows removed');
    const left = (await inbox.list({ limit: 50 })).rows.map((r) => `${r.event}:${r.status}`);
    expect(left).toEqual(['deal.created:handled', 'deal.won:handled', 'bounced:received']);
    expect((await run('purge')).stdout).toContain('0 rows removed');
  });
});

describe.each(['sqlite', 'postgres'] as const)('svc-webhooks inbox on %s: malformed rows', (name) => {
  it('lists and shows a row holding what the inbox never writes, marked with the reason (text and JSON)', async () => {
    const table = `malformed_${name}`;
    const path = join(dir, 'malformed.sqlite');
    const inbox =
      name === 'sqlite' ? createSqliteInbox({ path, table }) : createPostgresInbox({ client: pool!, table });
    const target =
      name === 'sqlite'
        ? ['--file', path, '--table', table]
        : ['--database', server!.connectionString, '--table', table];
    try {
      await inbox.migrate();
      const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: () => {} });
      const [far, headers] = [crmDelivery('deal.won'), crmDelivery('deal.won')];
      for (const delivery of [far!, headers!]) expect((await deliver(receiver, delivery)).status).toBe(200);
      const sql = async (text: string) => {
        if (name === 'postgres') await pool!.query(text);
        else {
          const raw = openRawSqlite(path);
          raw.exec(text);
          raw.close();
        }
      };
      await sql(`UPDATE ${table} SET run_at = 9223372036854775807 WHERE delivery_id = '${far!.deliveryId}'`);
      await sql(`UPDATE ${table} SET headers = 'not json' WHERE delivery_id = '${headers!.deliveryId}'`);

      const [listed, listedJson] = await Promise.all([
        runCli(cli, ['inbox', 'list', ...target]),
        runCli(cli, ['inbox', 'list', '--json', ...target]),
      ]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^ID\s+STATUS.*\s+MALFORMED$/m);
      expect(listed.stdout).toContain('run_at is not a time in epoch ms.');
      expect(listed.stdout).not.toMatch(/dedup store/);
      const rows = lines(listedJson.stdout);
      expect(rows.map((r) => [r.deliveryId, r.malformed])).toEqual([
        [headers!.deliveryId, undefined],
        [far!.deliveryId, 'run_at is not a time in epoch ms.'],
      ]);
      const [headersId, farId] = rows.map((r) => String(r.id));

      const [shownFar, shownHeaders, shownJson] = await Promise.all([
        runCli(cli, ['inbox', 'show', farId!, ...target]),
        runCli(cli, ['inbox', 'show', headersId!, ...target]),
        runCli(cli, ['inbox', 'show', headersId!, '--json', ...target]),
      ]);
      expect(shownFar.code).toBe(0);
      expect(shownFar.stdout).toMatch(/^run at\s+9223372036854776000$/m);
      expect(shownFar.stdout).toMatch(/^malformed\s+run_at is not a time in epoch ms\.$/m);
      expect(shownHeaders.code).toBe(0);
      expect(shownHeaders.stdout).toMatch(/^malformed\s+headers is not a JSON object of strings\.$/m);
      expect(JSON.parse(shownJson.stdout).row).toMatchObject({
        deliveryId: headers!.deliveryId,
        headers: {},
        malformed: 'headers is not a JSON object of strings.',
      });
    } finally {
      await inbox.close();
    }
  });
});

describe('svc-webhooks inbox: target errors', () => {
  it('without a target: exit 2 and how to name one', async () => {
    const run = await runCli(cli, ['inbox', 'list'], { env: { SVC_WEBHOOKS_INBOX_DATABASE: undefined } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No inbox to look at.');
    expect(run.stderr).toContain('SVC_WEBHOOKS_INBOX_DATABASE');
  });

  it('reads SVC_WEBHOOKS_INBOX_DATABASE; never prints the password of a bad or unreachable URL', async () => {
    const secret = 'pw_Zq81xVn3TtR7';
    const refused = await runCli(cli, ['inbox', 'list'], {
      env: { SVC_WEBHOOKS_INBOX_DATABASE: `postgres://app:${secret}@127.0.0.1:1/app` },
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('postgres://app:***@127.0.0.1:1/app');
    const notPostgres = await runCli(cli, ['inbox', 'list', '--database', `mysql://app:${secret}@db/app`]);
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.stderr).toContain('is not a postgres:// URL');
    const malformed = await runCli(cli, [
      'inbox',
      'list',
      '--database',
      `postgres://app:${secret}@[::1/app`,
      '--json',
    ]);
    expect(malformed.code).toBe(2);
    expect(JSON.parse(malformed.stdout).error.code).toBe('database_url_invalid');
    const wrongPassword = await runCli(cli, [
      'inbox',
      'purge',
      '--database',
      `postgres://nobody_here:${secret}@127.0.0.1:${server!.port}/postgres`,
    ]);
    expect(wrongPassword.code).toBe(1); // reached, and refused
    expect(wrongPassword.stderr).toContain('role "nobody_here" does not exist');
    for (const run of [refused, notPostgres, malformed, wrongPassword])
      expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('a missing file or a database without the table: exit 2, nothing created', async () => {
    const missing = join(dir, 'nowhere.sqlite');
    const run = await runCli(cli, ['inbox', 'list', '--file', missing]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No SQLite file at');
    expect(existsSync(missing)).toBe(false);
    const noTable = await runCli(cli, [
      'inbox',
      'list',
      '--database',
      server!.connectionString,
      '--table',
      'absent',
    ]);
    expect(noTable.code).toBe(2);
    expect(noTable.stderr).toContain('has no inbox table absent');
  });
  it('a postgres:// URL without pg installed: exit 2 with the install command', async () => {
    // The bin as installed in a project that has its dependencies (commander, zod) but not pg.
    const project = join(dir, 'without-pg');
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{ "type": "module" }');
    cpSync(dirname(cli), join(project, 'dist'), { recursive: true });
    for (const name of ['commander', 'zod'])
      symlinkSync(join(process.cwd(), 'node_modules', name), join(project, 'node_modules', name));
    const run = await runCli(join(project, 'dist', 'cli.js'), [
      'inbox',
      'list',
      '--database',
      'postgres://app:pw_Zq81xVn3TtR7@127.0.0.1:1/app',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('needs the `pg` driver');
    expect(run.stderr).toContain('fix: npm install pg');
    expect(run.stderr).not.toContain('pw_Zq81xVn3TtR7');
  });
});
