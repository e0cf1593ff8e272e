/**
 * The demo's inbox chapter: a CRM receiver in inbox mode on a SQLite file, in a real child process
 * (inbox-process.ts) whose handler writes a business row through the app's transaction. The process is
 * SIGKILLed after that write and before the commit; a delivery sent while it is down gets no answer
 * and the service retries it; after the restart the killed row runs again. Each deal ends with exactly
 * one business row.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { createSqliteInbox } from '@svc/webhooks/sqlite';
import type { CrmEmitter, VirtualClock } from '@svc/webhooks/testing';

export interface InboxChapterSummary {
  /** Business rows per deal after the chapter: exactly 1 each. */
  businessRows: Record<string, number>;
  /** The inbox rows: status and runs started. */
  rows: { deal: string; status: string; attempts: number }[];
  killedBeforeCommit: boolean;
  /** deal_43's first attempt found the process down (no response). */
  refusedWhileDown: boolean;
  /** deal_43's attempts, and its last attempt's status. */
  retry: { attempts: number; status: number };
}

const CHILD = fileURLToPath(new URL('./inbox-process.ts', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the receiving process and resolves once it listens; `onLine` gets each line it prints. */
function startProcess(env: Record<string, string>, onLine: (line: string) => void): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n').filter(Boolean)) {
        if (line === 'ready') resolve(child);
        else onLine(line);
      }
    });
    child.once('exit', (code) =>
      reject(new Error(`the receiving process exited (${code}) before it was ready`)),
    );
  });
}

async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (let waited = 0; !done() && waited < ms; waited += 20) await new Promise((r) => setTimeout(r, 20));
}

export async function inboxChapter(
  print: (line: string) => void,
  crm: CrmEmitter,
  clock: VirtualClock,
  time: () => string,
): Promise<InboxChapterSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-demo-inbox-'));
  const path = join(dir, 'app.sqlite');
  const app = new DatabaseSync(path);
  const children: ChildProcess[] = [];
  try {
    const inbox = createSqliteInbox({ path });
    await inbox.migrate();
    app.exec('CREATE TABLE deals (deal_id TEXT NOT NULL, delivery_id TEXT NOT NULL)'); // no unique key
    const port = await freePort();
    const hook = crm.createWebhook({
      name: 'inbox',
      url: `http://127.0.0.1:${port}/`,
      events: ['deal.created'],
    });
    const env = { SQLITE_PATH: path, PORT: String(port), CRM_SECRET: hook.secret };
    const short = (id: string) => id.slice(0, 8);
    const businessRows = () =>
      Object.fromEntries(
        (
          app.prepare('SELECT deal_id, count(*) AS n FROM deals GROUP BY deal_id').all() as {
            deal_id: string;
            n: number;
          }[]
        ).map((r) => [r.deal_id, Number(r.n)]),
      );

    let wrote = '';
    const first = await startProcess({ ...env, HANG_AFTER_WRITE: '1' }, (line) => {
      if (line.startsWith('wrote ')) wrote = line.slice(6);
    });
    children.push(first);
    print(`[${time()}]            receiving process started (pid ${first.pid}), inbox mode on a SQLite file`);
    const mine = (sent: { id: string; webhookId: string; attempts: { statusCode: number }[] }[]) =>
      sent.find((d) => d.webhookId === hook.id)!;
    const a = mine(await crm.emit('deal.created', { deal_id: 'deal_42' }));
    await until(() => wrote !== '');
    print(
      `[${time()}]            deal_42 ${short(a.id)}: its inbox row written and acknowledged; the worker's handler inserted into deals in its open transaction`,
    );
    const exited = new Promise((resolve) => first.once('exit', (_code, signal) => resolve(signal)));
    first.kill('SIGKILL');
    const signal = await exited;
    print(
      `[${time()}]            ${signal} before the commit: deals rows for deal_42: ${businessRows().deal_42 ?? 0}`,
    );

    const b = mine(await crm.emit('deal.created', { deal_id: 'deal_43' }));
    const refused = b.attempts[0]?.statusCode === 0;
    print(
      `[${time()}]            deal_43 ${short(b.id)} sent while the process is down: ${refused ? 'no response' : 'answered'}, the service retries in 1 s`,
    );
    const second = await startProcess(env, () => {});
    children.push(second);
    print(`[${time()}]            receiving process restarted (pid ${second.pid})`);
    await clock.advance(1_000);
    const retried = crm.getDelivery(b.id).attempts;
    const retry = { attempts: retried.length, status: retried.at(-1)?.statusCode ?? 0 };
    const handled = () =>
      Number(
        (
          app.prepare("SELECT count(*) AS n FROM webhook_inbox WHERE status = 'handled'").get() as {
            n: number;
          }
        ).n,
      );
    await until(() => handled() === 2);
    const rows = (
      app.prepare('SELECT body, status, attempts FROM webhook_inbox ORDER BY id').all() as {
        body: Uint8Array;
        status: string;
        attempts: number;
      }[]
    ).map((r) => ({
      deal: (JSON.parse(new TextDecoder().decode(r.body)) as { data: { deal_id: string } }).data.deal_id,
      status: r.status,
      attempts: Number(r.attempts),
    }));
    for (const row of rows)
      print(
        `            inbox row ${row.deal}: ${row.status} after ${row.attempts} run${row.attempts === 1 ? '' : 's'}`,
      );
    const counts = businessRows();
    print(
      `            deals: deal_42 ${counts.deal_42 ?? 0} row, deal_43 ${counts.deal_43 ?? 0} row: the killed run's write was never committed, so nothing happened twice`,
    );
    await inbox.close();
    return {
      businessRows: counts,
      rows,
      killedBeforeCommit: signal === 'SIGKILL',
      refusedWhileDown: refused,
      retry,
    };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
