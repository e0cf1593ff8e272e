/**
 * When the payload changes (docs/inbox.md): the email service starts sending `bounced` without
 * `provider` (it now calls it `mta`). Through the reference emitter, on real PostgreSQL and a real
 * SQLite file, each delivery is kept `quarantined` and answered 200 (the webhook stays active). A
 * re-drive before any fix leaves the rows `quarantined` with their issues (it made them `dead` with
 * `job_invalid` before). Then the app deploys a `repair` and re-drives through its receiver, by the
 * library function, by the real CLI process (`--receiver` module) and from the page it serves: the 12
 * rows the repair fixes are
 * each handled exactly once (one business row each, written in the worker's transaction), and the
 * rows it cannot fix stay `quarantined` with their latest and first issues, never `dead`.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createMailReceiver, type MailPayloadOf, type MailRepairs, type Outcome } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker, type Inbox } from '@svc/webhooks/postgres';
import { createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli } from '../cli/support/cli.js';
import { startInboxServe } from '../cli/support/inbox-page.js';
import { root } from '../package/dist.js';
import { postgresAvailable, startPostgres } from '../support/servers.js';
import { type InboxDatabase, postgresDatabase, sqliteDatabase, uniqueTable } from './support.js';

const REPAIRED = 12;
const FIRST_ISSUE = 'provider (invalid_type)';

/** The app's repair: `mta` is the new name of `provider`; one message's repair throws (a bug in it). */
const repair: MailRepairs = {
  bounced: (payload) => {
    if (payload.message_id === 'm_boom') throw new TypeError(`no provider for ${String(payload.to)}`);
    return { ...(payload as MailPayloadOf<'bounced'>), provider: payload.mta as string };
  },
};

/** The same repair as the module the CLI loads, in plain JavaScript (its secret from `secret`). */
const repairModule = (secret = 'process.env.SVC_MAIL_WEBHOOK_SECRET') => `
import { createMailReceiver } from '@svc/webhooks';

export const receiver = createMailReceiver({
  secret: ${secret},
  logger: false,
  repair: {
    bounced: (payload) => {
      if (payload.message_id === 'm_boom') throw new TypeError('no provider for ' + payload.to);
      return { ...payload, provider: payload.mta };
    },
  },
});
`;

interface Target {
  db: InboxDatabase;
  /** The CLI's target options for this database. */
  args: string[];
  close(): Promise<void>;
}

const targets: [string, () => Promise<Target>][] = [
  [
    'SQLite',
    async () => {
      const db = sqliteDatabase();
      return { db, args: ['--file', db.path], close: () => db.close() };
    },
  ],
];
if (postgresAvailable())
  targets.unshift([
    'PostgreSQL',
    async () => {
      const server = await startPostgres();
      const db = postgresDatabase(server.connectionString);
      return {
        db,
        args: ['--database', server.connectionString],
        close: async () => {
          await db.close();
          await server.close();
        },
      };
    },
  ]);

let cli: string;
let project: string;

beforeAll(async () => {
  cli = await buildCli();
  // An app's directory: the module imports `@svc/webhooks` as installed (the built package).
  project = mkdtempSync(join(tmpdir(), 'svc-repair-'));
  const installed = join(project, 'node_modules', '@svc', 'webhooks');
  mkdirSync(installed, { recursive: true });
  symlinkSync(join(root, 'package.json'), join(installed, 'package.json'));
  symlinkSync(dirname(cli), join(installed, 'dist'));
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }');
  writeFileSync(join(project, 'webhook-receiver.mjs'), repairModule());
}, 180_000);

afterAll(() => rmSync(project, { recursive: true, force: true }));

/**
 * The inbox after the drift: 12 `bounced` carrying `mta` instead of `provider`, one with neither (no
 * repair can say which it was) and one whose repair throws, all sent by the email emitter to the
 * app's receiver of this version (no repair), which keeps each `quarantined`.
 */
async function drifted(db: InboxDatabase) {
  const table = uniqueTable('repair');
  const inbox = db.inbox({ table });
  await inbox.migrate();
  const business = uniqueTable('bounces');
  await db.sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
  const clock = createVirtualClock();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 38, validate: false });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const hook = mail.createWebhook({ url, events: ['bounced'] });
  const before = createMailReceiver({ secret: hook.secret, handoff: inbox, logger: false });
  before.on('bounced', () => {
    throw new Error('no handler runs before the repair');
  });
  server.on('request', createNodeListener(before));
  const sent: { id: string; messageId: string }[] = [];
  const deliveries: { attempts: { statusCode: number | null }[] }[] = [];
  try {
    const send = async (payload: Record<string, unknown>) => {
      for (const d of await mail.emit('bounced', { provider: undefined, ...payload })) {
        sent.push({ id: d.id, messageId: String(payload.message_id) });
        deliveries.push(d);
      }
    };
    for (let i = 0; i < REPAIRED; i++) await send({ message_id: `m_${i}`, mta: 'postfix' });
    await send({ message_id: 'm_lost' });
    await send({ message_id: 'm_boom', mta: 'exim' });
    await clock.runAll();
    const statuses = deliveries.map((d) => d.attempts.map((a) => a.statusCode));
    expect(statuses).toEqual(sent.map(() => [200]));
    expect(mail.getWebhook(hook.id).status).toBe('active');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return { inbox, table, business, secret: hook.secret, sent, before };
}

/** Each row's status, code and message by message id (the emitter's `message_id`). */
async function rowsOf(inbox: Inbox, sent: { id: string; messageId: string }[]) {
  const byId = new Map(sent.map((s) => [s.id, s.messageId]));
  const { rows } = await inbox.list({ limit: 100 });
  return Object.fromEntries(
    rows.map((row) => [
      byId.get(row.deliveryId),
      { status: row.status, code: row.lastErrorCode, message: row.lastErrorMessage },
    ]),
  );
}

/** Runs the worker until no row is due. */
async function drain(worker: { runOnce(): Promise<number> }): Promise<number> {
  let ran = 0;
  for (let n = await worker.runOnce(); n > 0; n = await worker.runOnce()) ran += n;
  return ran;
}

for (const [name, open] of targets) {
  describe(`repair on ${name}`, () => {
    let target: Target;
    beforeAll(async () => {
      target = await open();
    }, 60_000);
    afterAll(() => target?.close());

    it('a re-drive before any fix: every row runs once and stays quarantined with its issue, none dead', async () => {
      const { db } = target;
      const { inbox, sent, before } = await drifted(db);
      const quarantined = await rowsOf(inbox, sent);
      expect(Object.values(quarantined)).toHaveLength(REPAIRED + 2);
      for (const row of Object.values(quarantined))
        expect(row).toEqual({
          status: 'quarantined',
          code: 'invalid_payload',
          message: expect.stringContaining(FIRST_ISSUE),
        });

      const reports: string[] = [];
      before.onError((_error, facts) => void reports.push(`${facts.phase}`));
      expect(await inbox.redrive({ status: 'quarantined' })).toBe(REPAIRED + 2);
      expect(
        await drain(createInboxWorker({ receiver: before, inbox, transactions: db.transactions() })),
      ).toBe(REPAIRED + 2);
      // Before this change: `dead`, `job_invalid`, "no longer parses (invalid_payload)".
      expect(await rowsOf(inbox, sent)).toEqual(quarantined);
      expect(reports).toEqual(Array.from({ length: REPAIRED + 2 }, () => 'job'));
    });

    async function repairedRun(redrive: (inbox: Inbox, secret: string, table: string) => Promise<number>) {
      const { db } = target;
      const { inbox, table, business, secret, sent } = await drifted(db);
      const outcomes: Outcome[] = [];
      const receiver = createMailReceiver({
        secret,
        handoff: inbox,
        logger: false,
        repair,
        onOutcome: (outcome) => outcomes.push(outcome),
      });
      const worker = createInboxWorker({ receiver, inbox, transactions: db.transactions() });
      const provider: string[] = [];
      receiver.on('bounced', async (event, context) => {
        provider.push(event.payload.provider);
        await db.insertBusiness(worker.tx(context), business, event.deliveryId);
      });

      expect(await redrive(inbox, secret, table)).toBe(REPAIRED);
      expect(await drain(worker)).toBe(REPAIRED);
      expect(await drain(worker)).toBe(0);

      // Exactly once: one business row per repaired delivery (the table has no unique constraint).
      const repairedIds = sent.filter((s) => /^m_\d+$/.test(s.messageId));
      const written = await db.sql(`SELECT delivery_id FROM ${business} ORDER BY delivery_id`);
      expect(written.map((r) => r.delivery_id)).toEqual(repairedIds.map((s) => s.id).sort());
      expect(provider).toEqual(Array.from({ length: REPAIRED }, () => 'postfix'));
      expect(
        outcomes.filter((o) => o.mode === 'worker' && o.repaired === true && o.kind === 'handled'),
      ).toHaveLength(REPAIRED);

      const rows = await rowsOf(inbox, sent);
      for (let i = 0; i < REPAIRED; i++)
        expect(rows[`m_${i}`]).toEqual({ status: 'handled', code: null, message: null });
      // What the repair could not fix keeps its latest failure and the first one, no value.
      expect(rows.m_lost).toEqual({
        status: 'quarantined',
        code: 'invalid_payload',
        message: `Invalid bounced payload: ${FIRST_ISSUE}, after the app's repair. | first: invalid_payload: Invalid bounced payload: ${FIRST_ISSUE}.`,
      });
      expect(rows.m_boom).toEqual({
        status: 'quarantined',
        code: 'repair_failed',
        message: `The app's repair of bounced threw (TypeError); the delivery is kept as it was sent. | first: invalid_payload: Invalid bounced payload: ${FIRST_ISSUE}.`,
      });
      expect(JSON.stringify(rows)).not.toContain('@'); // no recipient address

      // Again: nothing moves, and the first issues are kept once, not nested.
      expect(await redrive(inbox, secret, table)).toBe(0);
      expect(await rowsOf(inbox, sent)).toEqual(rows);
    }

    it('a repair deployed, re-driven by inbox.redrive({ receiver }): 12 handled exactly once, the rest stay quarantined with their issues', async () => {
      await repairedRun((inbox, secret) =>
        inbox.redrive(
          { status: 'quarantined', event: 'bounced' },
          { receiver: createMailReceiver({ secret, repair, logger: false }) },
        ),
      );
    });

    it('a repair deployed, re-driven by `svc-webhooks inbox redrive --receiver`: the same', async () => {
      await repairedRun(async (_inbox, secret, table) => {
        const run = await runCli(
          cli,
          [
            'inbox',
            'redrive',
            ...target.args,
            '--table',
            table,
            '--status',
            'quarantined',
            '--receiver',
            join(project, 'webhook-receiver.mjs'),
            '--json',
          ],
          { env: { SVC_MAIL_WEBHOOK_SECRET: secret } },
        );
        expect(run.stderr).toBe('');
        const result = JSON.parse(run.stdout) as { ok: boolean; moved: number; quarantined: number };
        expect(result).toEqual({ ok: true, moved: result.moved, quarantined: 2 });
        return result.moved;
      });
    });

    it('a repair deployed, re-driven from the page (`svc-webhooks inbox serve --receiver`): the same', async () => {
      await repairedRun(async (_inbox, secret, table) => {
        const module = join(project, `page-receiver-${table}.mjs`);
        writeFileSync(module, repairModule(JSON.stringify(secret)));
        const page = await startInboxServe(cli, [...target.args, '--table', table, '--receiver', module]);
        try {
          const response = await fetch(`${page.url}api/redrive`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ filter: { status: 'quarantined' }, confirm: true }),
          });
          expect(response.status).toBe(200);
          return ((await response.json()) as { moved: number }).moved;
        } finally {
          await page.stop();
        }
      });
    });
  });
}
