/**
 * Exactly-once effects in direct mode across crashes: deliveries from the reference emitters to a
 * receiving process in direct mode, SIGKILLed while a handler is between its business write and its
 * commit (the process prints `mid` there), then restarted on the same port. The services' retries find
 * each row and run it again. Each handler inserts one row into a business table with no unique
 * constraint through `context.tx`: after the retries every delivery has exactly one business row and one
 * `handled` inbox row, on PostgreSQL and on a SQLite file. `INBOX_DIRECT_KILL_DELIVERIES` (default 40)
 * and `INBOX_DIRECT_KILLS` (default 4) scale it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createCrmEmitter, createMailEmitter, createVirtualClock } from '@svc/webhooks/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { killTables, servicesRecord } from './kill-harness.js';
import { type Receiving, spawnReceiving } from './spawn-receiving.js';
import { type InboxDatabase, postgresDatabase, sqliteDatabase } from './support.js';

const DELIVERIES = Number(process.env.INBOX_DIRECT_KILL_DELIVERIES ?? 40);
const KILLS = Number(process.env.INBOX_DIRECT_KILLS ?? 4);
const TIMEOUT_MS = Math.max(180_000, DELIVERIES * 500);

/** Resolves true at the next `mid` line of the process (a handler between write and commit), false after 10 s. */
function nextMidHandler(receiving: Receiving): Promise<boolean> {
  return new Promise((resolve) => {
    const stdout = receiving.child.stdout!;
    const timer = setTimeout(() => done(false), 10_000);
    const onData = (chunk: Buffer) => {
      if (chunk.toString().includes('mid ')) done(true);
    };
    function done(seen: boolean) {
      clearTimeout(timer);
      stdout.off('data', onData);
      resolve(seen);
    }
    stdout.on('data', onData);
  });
}

async function directKillRun(db: InboxDatabase, dbEnv: Record<string, string>) {
  const { table, business } = await killTables(db, 'direct_kill');
  const port = await freePort();
  const clock = createVirtualClock();
  const { settled, seen, onEvent } = servicesRecord();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 31, onEvent });
  const crm = createCrmEmitter({ clock, allowPrivateNetworks: true, seed: 13, onEvent });
  const mailHook = mail.createWebhook({ url: `http://127.0.0.1:${port}/mail`, events: ['delivered'] });
  const crmHook = crm.createWebhook({
    name: 'sales',
    url: `http://127.0.0.1:${port}/crm`,
    events: ['deal.won'],
  });
  const env = {
    ...dbEnv,
    MODE: 'direct',
    TABLE: table,
    BUSINESS: business,
    PORT: String(port),
    MAIL_SECRET: mailHook.secret,
    CRM_SECRET: crmHook.secret,
  };
  let receiving = await spawnReceiving(env);
  const emitted: string[] = [];
  try {
    let n = 0;
    const emit = async () => {
      const i = n++;
      const sent =
        i % 2 === 0
          ? await mail.emit('delivered', { message_id: `m_${i}` })
          : await crm.emit('deal.won', { deal_id: `d_${i}` });
      emitted.push(...sent.map((d) => d.id));
    };
    const batch = Math.ceil(DELIVERIES / (KILLS + 1));
    let midHandler = 0;
    const signals: (NodeJS.Signals | null)[] = [];
    for (let k = 0; k <= KILLS; k++) {
      const count = Math.min(batch, DELIVERIES - n);
      const mid = nextMidHandler(receiving);
      const sending = (async () => {
        for (let i = 0; i < count; i += 4)
          await Promise.all(Array.from({ length: Math.min(4, count - i) }, emit));
      })();
      if (k === KILLS) {
        await sending;
        break;
      }
      // Kill while a handler's business row is written in its open transaction, not yet committed.
      if (await mid) midHandler++;
      receiving.child.kill('SIGKILL');
      signals.push(await receiving.exited);
      await sending; // its attempts during the restart fail: the services retry them
      receiving = await spawnReceiving(env);
    }
    expect(signals).toEqual(Array.from({ length: KILLS }, () => 'SIGKILL'));
    // The services' retries in virtual time: CRM at +1 s and +2 s, email at +1 and +2 minutes.
    for (let round = 0; round < 4; round++) await clock.advance(60_000);
    await clock.runAll();
    expect(emitted).toHaveLength(DELIVERIES);
    expect(seen.paused).toBe(0);
    expect(emitted.map((id) => settled.get(id)).filter((s) => s !== 'succeeded')).toEqual([]);
    // Direct mode answers after the commit: every acknowledged delivery is handled already.
    const inboxRows = await db.sql(`SELECT delivery_id, status FROM ${table}`);
    expect(inboxRows.filter((r) => r.status !== 'handled')).toEqual([]);
    expect(new Set(inboxRows.map((r) => String(r.delivery_id)))).toEqual(new Set(emitted));
    const twice = await db.sql(
      `SELECT delivery_id, count(*) AS n FROM ${business} GROUP BY delivery_id HAVING count(*) <> 1`,
    );
    expect(twice).toEqual([]);
    const businessIds = await db.sql(`SELECT DISTINCT delivery_id FROM ${business}`);
    expect(new Set(businessIds.map((r) => String(r.delivery_id)))).toEqual(new Set(emitted));
    // Every kill landed between a handler's write and its commit, and the senders retried.
    expect(midHandler).toBe(KILLS);
    expect(seen.failedAttempts).toBeGreaterThanOrEqual(KILLS);
    return {
      deliveries: DELIVERIES,
      kills: KILLS,
      killsMidHandler: midHandler,
      failedAttempts: seen.failedAttempts,
    };
  } finally {
    receiving.child.kill('SIGKILL');
    await receiving.exited;
    await sleep(0);
  }
}

describe.runIf(postgresAvailable())('direct mode kill test on PostgreSQL', () => {
  let postgres: PostgresServer;
  let db: InboxDatabase;
  afterAll(async () => {
    await db?.close();
    await postgres?.close();
  });
  it(
    'SIGKILL mid-handler, then the services retry: one business row and one handled row per delivery',
    async () => {
      postgres = await startPostgres();
      db = postgresDatabase(postgres.connectionString);
      const counts = await directKillRun(db, { DB: 'postgres', DATABASE_URL: postgres.connectionString });
      console.info('direct-mode kill test, PostgreSQL + pg:', JSON.stringify(counts));
    },
    TIMEOUT_MS,
  );
});

describe('direct mode kill test on SQLite', () => {
  const db = sqliteDatabase();
  afterAll(() => db.close());
  it(
    'SIGKILL mid-handler, then the services retry: one business row and one handled row per delivery',
    async () => {
      const counts = await directKillRun(db, { DB: 'sqlite', SQLITE_PATH: db.path });
      console.info('direct-mode kill test, SQLite file:', JSON.stringify(counts));
    },
    TIMEOUT_MS,
  );
});
