/**
 * The kill test's harness (kill.test.ts, kill-orm.test.ts): deliveries from the reference emitters to
 * a receiving process in inbox mode (fixtures/receiving-process.ts) that is SIGKILLed while rows run
 * and restarted on the same port; then the services' retries, and the counts checked.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createCrmEmitter,
  createMailEmitter,
  createVirtualClock,
  type EmitterReport,
} from '@svc/webhooks/testing';
import { expect } from 'vitest';
import { freePort } from '../support/servers.js';
import { spawnReceiving } from './spawn-receiving.js';
import { type InboxDatabase, uniqueTable } from './support.js';

const DEFAULT_DELIVERIES = Number(process.env.INBOX_KILL_DELIVERIES ?? 180);
const DEFAULT_KILLS = Number(process.env.INBOX_KILLS ?? 5);
export const TIMEOUT_MS = Math.max(240_000, DEFAULT_DELIVERIES * 500);

/** What the services record: each delivery's final status, failed attempts, pauses. */
export function servicesRecord() {
  const settled = new Map<string, string>();
  const seen = { failedAttempts: 0, paused: 0 };
  const onEvent = (report: EmitterReport) => {
    if (report.type === 'delivery_settled') settled.set(report.delivery.id, report.delivery.status);
    else if (report.type === 'attempt' && !report.attempt.success) seen.failedAttempts++;
    else if (report.type === 'webhook_paused') seen.paused++;
  };
  return { settled, seen, onEvent };
}

/** A fresh inbox table name and a business table with no unique constraint (a double write shows as two rows). */
export async function killTables(db: InboxDatabase, prefix: string) {
  const table = uniqueTable(`${prefix}_inbox`);
  const business = uniqueTable(`${prefix}_business`);
  await db.sql(`CREATE TABLE ${business} (delivery_id TEXT NOT NULL)`);
  return { table, business };
}

export async function killRun(
  db: InboxDatabase,
  dbEnv: Record<string, string>,
  { DELIVERIES, KILLS } = { DELIVERIES: DEFAULT_DELIVERIES, KILLS: DEFAULT_KILLS },
) {
  const { table, business } = await killTables(db, 'kill');
  const port = await freePort();
  const clock = createVirtualClock();
  const { settled, seen, onEvent } = servicesRecord();
  const mail = createMailEmitter({ clock, allowPrivateNetworks: true, seed: 29, onEvent });
  const crm = createCrmEmitter({ clock, allowPrivateNetworks: true, seed: 92, onEvent });
  const mailHook = mail.createWebhook({
    url: `http://127.0.0.1:${port}/mail`,
    events: ['delivered', 'opened'],
  });
  const crmHook = crm.createWebhook({
    name: 'sales',
    url: `http://127.0.0.1:${port}/crm`,
    events: ['deal.won'],
  });
  const env = {
    ...dbEnv,
    TABLE: table,
    BUSINESS: business,
    PORT: String(port),
    MAIL_SECRET: mailHook.secret,
    CRM_SECRET: crmHook.secret,
  };
  let receiving = await spawnReceiving(env);
  const emitted: string[] = [];
  const started = Date.now();
  const phase = (name: string) => console.info(`${dbEnv.DB} ${name} at ${Date.now() - started} ms`);
  const processing = async () =>
    Number((await db.sql(`SELECT count(*) AS n FROM ${table} WHERE status = 'processing'`))[0]!.n);
  try {
    let n = 0;
    const emit = async () => {
      const i = n++;
      const sent =
        i % 2 === 0
          ? await mail.emit(i % 4 === 0 ? 'delivered' : 'opened', { message_id: `m_${i}` })
          : await crm.emit('deal.won', { deal_id: `d_${i}` });
      emitted.push(...sent.map((d) => d.id));
    };
    const signals: (NodeJS.Signals | null)[] = [];
    const batch = Math.ceil(DELIVERIES / (KILLS + 1));
    let midRun = 0;
    for (let k = 0; k <= KILLS; k++) {
      const count = Math.min(batch, DELIVERIES - n);
      // Send a batch, 8 at a time; the in-process worker starts on it at once.
      const sending = (async () => {
        for (let i = 0; i < count; i += 8)
          await Promise.all(Array.from({ length: Math.min(8, count - i) }, emit));
      })();
      if (k === KILLS) {
        await sending;
        break;
      }
      // Kill while rows run: a handler's row written in its open transaction, the commit not yet sent.
      const until = Date.now() + 10_000;
      while ((await processing()) === 0 && Date.now() < until) await sleep(5);
      if ((await processing()) > 0) midRun++;
      await sleep(Math.floor(Math.random() * 40));
      receiving.child.kill('SIGKILL');
      signals.push(await receiving.exited);
      await sending; // its attempts during the restart fail: the services retry them
      receiving = await spawnReceiving(env);
    }
    phase('kills and sending done');
    expect(signals).toEqual(Array.from({ length: KILLS }, () => 'SIGKILL'));
    // The services' retries, in virtual time, while the process is up: CRM at +1 s and +2 s, email at
    // +1 and +2 minutes.
    for (let round = 0; round < 4; round++) await clock.advance(60_000);
    await clock.runAll();
    expect(emitted).toHaveLength(DELIVERIES);
    const states = emitted.map((id) => settled.get(id));
    expect(seen.paused).toBe(0);
    phase('retries done');
    expect(states.filter((s) => s !== 'succeeded')).toEqual([]);

    const handled = async () =>
      Number((await db.sql(`SELECT count(*) AS n FROM ${table} WHERE status = 'handled'`))[0]!.n);
    const deadline = Date.now() + 60_000;
    while ((await handled()) < DELIVERIES && Date.now() < deadline) await sleep(200);
    phase('handled');
    const inboxRows = await db.sql(`SELECT delivery_id, status, attempts FROM ${table}`);
    expect(inboxRows).toHaveLength(DELIVERIES);
    expect(inboxRows.filter((r) => r.status !== 'handled')).toEqual([]);
    expect(new Set(inboxRows.map((r) => String(r.delivery_id)))).toEqual(new Set(emitted));
    const twice = await db.sql(
      `SELECT delivery_id, count(*) AS n FROM ${business} GROUP BY delivery_id HAVING count(*) <> 1`,
    );
    expect(twice).toEqual([]);
    const businessIds = await db.sql(`SELECT DISTINCT delivery_id FROM ${business}`);
    expect(new Set(businessIds.map((r) => String(r.delivery_id)))).toEqual(new Set(emitted));
    // The kills landed while handlers ran, and those rows ran again after the restart.
    expect(midRun).toBeGreaterThanOrEqual(KILLS - 1);
    expect(inboxRows.filter((r) => Number(r.attempts) > 1).length).toBeGreaterThan(0);
    return {
      deliveries: DELIVERIES,
      kills: KILLS,
      attemptsFailedAtSender: seen.failedAttempts,
      killsWithRowsRunning: midRun,
      rowsRunMoreThanOnce: inboxRows.filter((r) => Number(r.attempts) > 1).length,
    };
  } finally {
    receiving.child.kill('SIGKILL');
    await receiving.exited;
  }
}
