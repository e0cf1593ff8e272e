/**
 * Instructions per inbox row run, counted by Valgrind's callgrind on a SQLite file (no network, so
 * the count is the worker's own work and SQLite's, and repeats to about 1%), beside the raw
 * claim-update loop of bench/inbox.mts and parts of our run:
 *
 *   npx tsx bench/inbox-instructions.mts <contender> [--rows 600] [--warm 600] [--one-key] [--keep FILE]
 *
 * Each row has its own ordering key (`message_id`), as in bench/inbox.mts; `--one-key` gives all
 * rows one key (one message's events: each row waits for the one before it, and the key's handled
 * rows pile up behind the claim).
 * - `raw`: the raw loop: claim one row through the inbox's runnable index (`UPDATE … WHERE id =
 *   (SELECT … ORDER BY run_at, id LIMIT 1) RETURNING *`), parse its body, a no-op handler, mark it
 *   handled (bench/inbox.mts, one in flight).
 * - `worker`: `createInboxWorker({ concurrency: 1 }).runOnce()`, a no-op handler, no transactions.
 * - `worker-tx`: the same with `sqliteTransactions` (the handler's transaction and the completion in it).
 * - `worker-8`: `worker` at `concurrency: 8` (rows claimed ahead, completions grouped): the count
 *   behind the goal at 8 in flight. The raw loop's count is the same at any number in flight (its
 *   driver is synchronous), so `raw` is its ceiling too.
 * - `statements`: our claim and completion statements only, one row at a time, nothing run.
 * - `runjob`: `receiver.runJob` of each stored row (its signature verified again, parse, pipeline,
 *   no-op handler) with a claim that touches no database.
 * - `verify`: the stored signature's check of each row alone (one HMAC over the stored bytes).
 *
 * The parent seeds one table through `receiver.handle()` of signed `delivered` deliveries in inbox
 * mode (each row its own ordering key), starts the contender under callgrind with counting off, runs
 * those rows (the warm-up: JIT), seeds the counted rows into the same table while the child waits,
 * and counts the child's second pass only, by the same inbox and worker.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { RunJobOptions } from '../src/handoff/index.js';
import { queueOf } from '../src/inbox/inbox.js';
import { storedOf } from '../src/inbox/rows.js';
import { createMailReceiver } from '../src/index.js';
import { createInboxWorker, createSqliteInbox, sqliteTransactions } from '../src/sqlite.js';
import { createSignedRequest } from '../src/testing/index.js';
import { verifySignature } from '../src/verify/index.js';
import { openRawSqlite } from '../test/support/sqlite.js';
import { callgrindArgs, countsOf } from './callgrind.mjs';

const SECRET = 'whsec_bench_inbox_0123456789abcdefghij';
const logger = () => {};
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
/** The inbox table of the file: warmed up, then seeded again and counted, by one inbox and one worker. */
const TABLE = 'bench_inbox';

const [first, contender, file] = process.argv.slice(2);

if (first === '--loop') await loop(contender!, file!);
else await count(first!);

/**
 * The child: runs `contender` over the rows not run yet at each stdin line, answers `done <n>`. One
 * inbox, one worker (and the raw loop's statements prepared once) for the whole run, as in an app:
 * a worker made per pass would be compiled again from cold (its closures are new, V8's --trace-opt
 * shows `run`, `runAndSettle` and the statement calls optimised again in the counted pass), about
 * 230,000–340,000 instructions a row of compiler work a long-running worker pays once.
 */
async function loop(contender: string, path: string): Promise<void> {
  const receiver = createMailReceiver({ secret: SECRET, logger });
  receiver.on('delivered', () => {});
  const db = openRawSqlite(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  const inbox = createSqliteInbox({ path, table: TABLE });
  const queue = queueOf(inbox);
  const transactions = contender === 'worker-tx' ? sqliteTransactions(db) : undefined;
  const concurrency = contender === 'worker-8' ? 8 : 1;
  const worker = createInboxWorker({ receiver, inbox, transactions, concurrency });
  const claim = db.prepare(
    // Through the inbox's runnable index (SQLite takes a partial index only for a query that
    // repeats its condition), as bench/inbox.mts's raw loop: not a scan of the table by id.
    `UPDATE ${TABLE} SET status = 'processing', attempts = attempts + 1 WHERE id = (SELECT id FROM ${TABLE} WHERE service = 'mail' AND ordering_key IS NOT NULL AND status IN ('received', 'failed', 'processing') AND status = 'received' AND run_at <= ? ORDER BY run_at, id LIMIT 1) RETURNING *`,
  );
  const complete = db.prepare(
    `UPDATE ${TABLE} SET status = 'handled', handled_at = ? WHERE id = ? AND status = 'processing'`,
  );
  const unread = db.prepare(`SELECT * FROM ${TABLE} WHERE id > ? ORDER BY id`);
  let lastId = 0;
  const handler = (_payload: unknown) => {};
  const decoder = new TextDecoder();
  // The row as a claim that records nothing: the run's own cost, without the inbox's UPDATE.
  const hold = () => ({
    sync: false as const,
    token: 't',
    leaseEndsAt: Date.now() + 30_000,
    complete: async () => true,
    release: async () => true,
  });
  const run = async (): Promise<number> => {
    let n = 0;
    if (contender === 'raw') {
      for (;;) {
        const [row] = claim.all(Date.now()) as Record<string, unknown>[];
        if (!row) break;
        handler(JSON.parse(decoder.decode(row.body as Uint8Array)));
        complete.run(Date.now(), row.id as number);
        n++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } else if (contender === 'worker' || contender === 'worker-tx' || contender === 'worker-8') {
      n = await worker.runOnce();
    } else if (contender === 'statements') {
      for (;;) {
        const [row] = await queue.claim(1, 30_000, 'mail');
        if (!row) break;
        await queue.db.query(queue.statements.complete, [Number(row.id), Number(row.fence), Date.now()]);
        n++;
      }
    } else {
      for (const row of unread.all(lastId) as Record<string, unknown>[]) {
        lastId = Number(row.id);
        const stored = storedOf(row);
        if (contender === 'verify') {
          const result = await verifySignature(stored.body, stored.headers['x-svcmail-sig'], [SECRET]);
          if (!result.ok) throw new Error('verify');
        } else {
          const verdict = await receiver.runJob(stored, { hold } as RunJobOptions);
          if (verdict.kind !== 'handled') throw new Error(`runJob: ${verdict.kind}`);
        }
        n++;
      }
    }
    return n;
  };
  console.log('ready');
  for await (const _line of createInterface({ input: process.stdin })) console.log(`done ${await run()}`);
  await inbox.close();
}

/** The parent: seeds the file, runs the child under callgrind, counts the second pass. */
async function count(contender: string): Promise<void> {
  const rows = arg('--rows', 600);
  const warm = arg('--warm', 600);
  const oneKey = process.argv.includes('--one-key');
  const dir = mkdtempSync(join(tmpdir(), 'bench-inbox-instr-'));
  const path = join(dir, 'app.sqlite');
  let seeded = 0;
  /** Writes `n` more signed deliveries through `receiver.handle()` in inbox mode. */
  const seed = async (n: number) => {
    const inbox = createSqliteInbox({ path, table: TABLE });
    await inbox.migrate();
    const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger });
    for (let i = 0; i < n; i++) {
      const payload = { message_id: oneKey ? 'm_one' : `m_${seeded++}` };
      const answer = await receiver.handle(
        await createSignedRequest({ service: 'mail', event: 'delivered', secret: SECRET, payload }),
      );
      if (answer.status !== 200) throw new Error(`seed: ${answer.status}`);
    }
    await inbox.close();
  };
  await seed(warm);
  const out = join(dir, 'callgrind.out');
  const child = spawn(
    'valgrind',
    callgrindArgs(out, fileURLToPath(import.meta.url), '--loop', contender, path),
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const expect = async (prefix: string) => {
    const line = (await lines.next()).value as string;
    if (!line?.startsWith(prefix)) throw new Error(`child said ${line}`);
    return line;
  };
  await expect('ready');
  child.stdin!.write('run\n');
  const warmed = Number((await expect('done')).split(' ')[1]);
  if (warmed !== warm) throw new Error(`${contender}: ${warmed} of ${warm} warm-up rows ran`);
  // The counted rows, written while the child waits (WAL: its connections stay open).
  await seed(rows);
  execFileSync('callgrind_control', ['-i', 'on', String(child.pid)]);
  child.stdin!.write('run\n');
  const done = await expect('done');
  execFileSync('callgrind_control', ['-i', 'off', String(child.pid)]);
  const ran = Number(done.split(' ')[1]);
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.stdin!.end();
  });
  const { total, collector, compiler } = countsOf(readFileSync(out, 'utf8'));
  // --keep FILE: keep callgrind's output for callgrind_annotate (SQLite's and V8's functions by name).
  const keep = process.argv.indexOf('--keep');
  if (keep !== -1) renameSync(out, process.argv[keep + 1]!);
  rmSync(dir, { recursive: true, force: true });
  if (ran !== rows) throw new Error(`${contender}: ${ran} of ${rows} rows ran`);
  const per = (n: number) => Math.round(n / rows).toLocaleString('en-US');
  console.log(
    `inbox ${contender}${oneKey ? ' (one key)' : ''}: ${per(total)} instructions per row, ${per(total - collector)} without the garbage collector, ${per(total - collector - compiler)} without it and the JIT compilers (${per(compiler)}; ${rows} counted after ${warm})`,
  );
}
