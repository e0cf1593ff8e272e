/**
 * Rows for the inbox page's tests and `svc-webhooks inbox serve` as a running process. Most rows are
 * written by real receivers in inbox mode from signed requests (delivered, bounced quarantined by the
 * schema, deal.won); one hostile row is written straight in SQL (another program may have written
 * anything), and one row's last error is made hostile with SQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import type { Inbox } from '@svc/webhooks/postgres';
import { createSignedRequest } from '@svc/webhooks/testing';
import { expect } from 'vitest';
import { supportedNode } from './cli.js';

const SECRET = 'whsec_inbox_page_test_0123456789abcdef';
/** Markup, a script, bidi and terminal controls: each must be shown as text, never run or applied. */
export const HOSTILE_EVENT = '<img src=x onerror="globalThis.pwned=1">deal.won\u202e';
export const HOSTILE_BODY = '{"note":"</pre><script>globalThis.pwned=2</script>","flip":"abc\u202edef"}';
export const HOSTILE_ERROR = '<b onmouseover="globalThis.pwned=3">boom</b>\u001b[2J';
export const MAIL_ROWS = 30;

/** Writes the rows; returns the ids the tests act on. */
export async function seedPageRows(inbox: Inbox, sql: (text: string) => Promise<unknown>, table: string) {
  await inbox.migrate();
  const logger = () => {};
  const mail = createMailReceiver({ secret: SECRET, handoff: inbox, logger });
  const crm = createCrmReceiver({ secret: SECRET, handoff: inbox, logger });
  const now = Date.now();
  for (let i = 0; i < MAIL_ROWS; i++) {
    const request = await createSignedRequest({
      service: 'mail',
      event: 'delivered',
      secret: SECRET,
      seed: `page-${i}`,
      now: now + i,
      payload: { message_id: `m_page_${i}` },
    });
    expect((await mail.handle(request)).status).toBe(200);
  }
  for (const i of [1, 2]) {
    const request = await createSignedRequest({
      service: 'mail',
      event: 'bounced',
      secret: SECRET,
      seed: `quarantine-${i}`,
      payload: { provider: undefined, message_id: `m_bad_${i}` },
    });
    expect((await mail.handle(request)).status).toBe(200);
  }
  const won = await createSignedRequest({
    service: 'crm',
    event: 'deal.won',
    secret: SECRET,
    seed: 'won',
    data: { deal_id: 'deal_page' },
  });
  expect((await crm.handle(won)).status).toBe(200);
  // Written straight in SQL: another program (or a hand) may have written anything.
  const hex = Buffer.from(new TextEncoder().encode(HOSTILE_BODY)).toString('hex');
  const body = inbox.dialect === 'postgres' ? `'\\x${hex}'::bytea` : `x'${hex}'`;
  const text = (value: string) => `'${value.replaceAll("'", "''")}'`;
  const headers = JSON.stringify({ 'x-svccrm-event': HOSTILE_EVENT });
  await sql(
    `INSERT INTO ${table} (dedup_key, service, event, delivery_id, event_at, status, run_at, received_at, headers, body) VALUES ('crm:hostile-page-row', 'crm', ${text(HOSTILE_EVENT)}, ${text('dlv_<i>hostile</i>')}, ${now}, 'received', ${now}, ${now}, ${text(headers)}, ${body})`,
  );
  const [dead] = (await inbox.list({ event: 'deal.won' })).rows;
  const [hostile] = (await inbox.list({ event: HOSTILE_EVENT })).rows;
  const message = HOSTILE_ERROR.replaceAll("'", "''");
  await sql(
    `UPDATE ${table} SET status = 'dead', attempts = 10, last_error_code = 'handler_failed', last_error_message = '${message}' WHERE id IN (${dead!.id}, ${hostile!.id})`,
  );
  return { dead: dead!.id, hostile: hostile!.id };
}

/** A running `svc-webhooks inbox serve --port 0 --json`. */
export interface RunningInboxPage {
  child: ChildProcess;
  url: string;
  port: number;
  target: string;
  stop(): Promise<number | null>;
}

/** Starts `inbox serve` and waits for its first line; rejects with its stderr if it exits first. */
export function startInboxServe(cli: string, args: readonly string[]): Promise<RunningInboxPage> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.SVC_WEBHOOKS_INBOX_DATABASE;
  const child = spawn(supportedNode, [cli, 'inbox', 'serve', '--port', '0', '--json', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    child.on('close', (code) => reject(new Error(`inbox serve exited ${code}: ${stdout}${stderr}`)));
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const at = stdout.indexOf('\n');
      if (at < 0) return;
      const first = JSON.parse(stdout.slice(0, at)) as { url: string; port: number; target: string };
      resolve({
        child,
        ...first,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
  });
}
