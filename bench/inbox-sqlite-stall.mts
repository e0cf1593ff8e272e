/**
 * Does an inbox worker in the receiving process stall acknowledgements on SQLite? The documented
 * default (docs/inbox.md): a receiver in inbox mode on a SQLite file, its worker in the same process
 * running each row in the app's transaction (`sqliteTransactions` on a connection of its own, busy
 * timeout 2 s), the handler writing one business row and then waiting 8 ms. DELIVERIES deliveries
 * (half email, half CRM) over real HTTP (node:http on 127.0.0.1, port 0), IN_FLIGHT at a time, with
 * 0, 1 (mail) and 2 (mail and CRM) workers started. Reported: acknowledgement p50 / p99 / max, the
 * answers other than 200, and the longest event-loop stall (`monitorEventLoopDelay`, 5 ms resolution).
 * Goal: p99 with workers ≤ 2× p99 without, stall ≤ 50 ms.
 *
 * Run: `npx tsx bench/inbox-sqlite-stall.mts`. Env: STALL_BENCH_ROUNDS (3), STALL_BENCH_DELIVERIES
 * (120), STALL_BENCH_IN_FLIGHT (8), STALL_BENCH_HANDLER_MS (8).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createNodeListener } from '../src/adapters/node/listener.js';
import { createCrmReceiver, createMailReceiver } from '../src/index.js';
import { createInboxWorker, createSqliteInbox, type InboxWorker, sqliteTransactions } from '../src/sqlite.js';
import { createSignedRequest } from '../src/testing/index.js';
import { openRawSqlite, rawSqliteDriver } from '../test/support/sqlite.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ROUNDS = env('STALL_BENCH_ROUNDS', 3);
const DELIVERIES = env('STALL_BENCH_DELIVERIES', 120);
const IN_FLIGHT = env('STALL_BENCH_IN_FLIGHT', 8);
const HANDLER_MS = env('STALL_BENCH_HANDLER_MS', 8);
const MAIL_SECRET = 'whsec_bench_stall_mail_0123456789abcdefgh';
const CRM_SECRET = 'whsec_bench_stall_crm_0123456789abcdefghi';
const logger = () => {};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

interface RoundResult {
  p50: number;
  p99: number;
  max: number;
  stallMs: number;
  notOk: number;
}

async function round(workers: 0 | 1 | 2, index: number): Promise<RoundResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-stall-'));
  const path = join(dir, 'app.sqlite');
  const setup = openRawSqlite(path);
  setup.exec('PRAGMA journal_mode = WAL');
  setup.exec('CREATE TABLE business (delivery_id TEXT NOT NULL)');
  setup.close();
  const inbox = createSqliteInbox({ path });
  await inbox.migrate();
  const mail = createMailReceiver({ secret: MAIL_SECRET, handoff: inbox, logger });
  const crm = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger });
  const connections: ReturnType<typeof openRawSqlite>[] = [];
  const started: InboxWorker<ReturnType<typeof openRawSqlite>>[] = [];
  const handler = async (deliveryId: string, tx: unknown) => {
    (tx as ReturnType<typeof openRawSqlite>)
      .prepare('INSERT INTO business (delivery_id) VALUES (?)')
      .run(deliveryId);
    await sleep(HANDLER_MS);
  };
  mail.on('delivered', (event, context) => handler(event.deliveryId, context.tx));
  crm.on('deal.won', (event, context) => handler(event.deliveryId, context.tx));
  for (const receiver of [mail, crm].slice(0, workers)) {
    // docs/inbox.md: the worker's transactions on a connection of its own, with a busy timeout.
    const app = openRawSqlite(path);
    app.exec('PRAGMA busy_timeout = 2000');
    connections.push(app);
    const worker = createInboxWorker({ receiver, inbox, transactions: sqliteTransactions(app), pollMs: 50 });
    worker.start();
    started.push(worker);
  }
  const mailListener = createNodeListener(mail);
  const crmListener = createNodeListener(crm);
  const server = createServer((request, response) =>
    (request.url === '/mail' ? mailListener : crmListener)(request, response),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const requests = await Promise.all(
    Array.from({ length: DELIVERIES }, async (_, i) => {
      const isMail = i % 2 === 0;
      const request = isMail
        ? await createSignedRequest({
            service: 'mail',
            event: 'delivered',
            secret: MAIL_SECRET,
            payload: { message_id: `msg_${index}_${i}` },
          })
        : await createSignedRequest({
            service: 'crm',
            event: 'deal.won',
            secret: CRM_SECRET,
            data: { deal_id: `d_${index}_${i}` },
          });
      const headers = Object.fromEntries(request.headers);
      return { url: `${base}/${isMail ? 'mail' : 'crm'}`, headers, body: await request.text() };
    }),
  );
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const acks: number[] = [];
  let notOk = 0;
  let next = 0;
  delay.enable();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < requests.length) {
        const { url, headers, body } = requests[next++]!;
        const t0 = performance.now();
        const response = await fetch(url, { method: 'POST', headers, body });
        await response.arrayBuffer();
        acks.push(performance.now() - t0);
        if (response.status !== 200) notOk++;
      }
    }),
  );
  delay.disable();
  // Let the workers finish the rows, so the next round starts from a quiet process.
  const served = workers === 0 ? 0 : workers === 1 ? Math.ceil(DELIVERIES / 2) : DELIVERIES;
  for (let i = 0; i < 400 && (await inbox.stats()).rows.handled < served; i++) await sleep(50);
  await Promise.all(started.map((worker) => worker.stop()));
  for (const connection of connections) connection.close();
  await new Promise((resolve) => server.close(resolve));
  await inbox.close();
  rmSync(dir, { recursive: true, force: true });
  const sorted = acks.sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1)!,
    stallMs: delay.max / 1e6,
    notOk,
  };
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(1) : ms.toFixed(0));
console.log(
  `node ${process.version}, ${rawSqliteDriver()}, ${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(
      ' ',
    )}; ${DELIVERIES} deliveries, ${IN_FLIGHT} in flight, ${HANDLER_MS} ms handler, ${ROUNDS} rounds`,
);
console.log('workers | ack p50 ms | ack p99 ms | ack max ms | event-loop stall ms | not 200');
// A discarded round first: the first requests of a process pay for compiling and preparing.
await round(1, 999);
for (const workers of [0, 1, 2] as const) {
  const results: RoundResult[] = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await round(workers, workers * 100 + r));
  const span = (pick: (x: RoundResult) => number) => {
    const values = results.map(pick).sort((a, b) => a - b);
    return values.length === 1 ? fmt(values[0]!) : `${fmt(values[0]!)}–${fmt(values.at(-1)!)}`;
  };
  console.log(
    `${workers} | ${span((x) => x.p50)} | ${span((x) => x.p99)} | ${span((x) => x.max)} | ${span((x) => x.stallMs)} | ${results.map((x) => x.notOk).join(', ')}`,
  );
}
