/**
 * Where an inbox-mode acknowledgement's work goes, counted by Valgrind's callgrind (instructions per
 * delivery: deterministic where times on a shared machine are not). Each contender runs in a child
 * under callgrind with counting off; after a warm-up (JIT) counting is turned on for `--requests`
 * deliveries only. SQLite runs in the process, so its INSERT is counted too; a PostgreSQL INSERT is a
 * round trip whose server side no client count sees, so it is not among them.
 *
 *   npx tsx bench/inbox-ack-instructions.mts [contender …] [--requests 5000] [--warm 5000] [--keep DIR] [--drift]
 *
 * `--keep DIR`: keep each contender's callgrind output as DIR/<contender>.out (for callgrind_annotate).
 * Each count is printed in full, without the garbage collector, and without it and the JIT compilers
 * (their runtime entries, inclusive): a large function optimised inside the counted window (zod's
 * parse of a schema, the receive path) costs millions of instructions once; `--warm 15000` passes
 * the last tier-up of the inbox contender.
 * `ACK_BENCH_STDERR=1`: show the children's stderr (valgrind's and a contender's error), hidden otherwise.
 * `--drift`: the body carries two fields the schema does not know (`tier`, `region`), so every
 * delivery has payload drift (core/drift.ts) and, in inbox mode, its counts written (inbox/drift.ts).
 *
 * Contenders (a signed 200-byte email `delivered`, new delivery id each time; all by default):
 * - `raw`: the raw single-row INSERT of bench/inbox.mts on a SQLite file (WAL, synchronous NORMAL,
 *   one prepared statement), the ceiling the goal is measured against.
 * - `verify`: node:crypto HMAC + timingSafeEqual + JSON.parse of the body (the raw receiver's work).
 * - `handwritten`: `verify`, then the `raw` INSERT of the row (headers with the signature, the
 *   body's key): the hand-written verify-then-INSERT receiver the goal is measured against.
 * - `schema`: the schema check alone (`zod/mini`) of the parsed body: what moving it to the worker
 *   would take off the acknowledgement.
 * - `parse`: `receiver.receive()` without a hand-off or handler: verify, parse, schema (`ignored`).
 * - `handoff`: `receiver.receive()` with a hand-off target that stores nothing: verify, parse,
 *   schema, dedup key, the job and its MAC.
 * - `row`: the same with the inbox's `enqueue` over a database that answers at once (the row's
 *   fields and the INSERT's parameters, no SQL run).
 * - `inbox`: `receiver.receive()` in inbox mode on a SQLite file (the whole acknowledgement).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { callgrindArgs, countsOf } from './callgrind.mjs';
import { mailBody, signatureOf } from './support.mjs';

const SECRET = 'whsec_bench_inbox_0123456789abcdefghij';
const CONTENDERS = ['raw', 'verify', 'handwritten', 'schema', 'parse', 'handoff', 'row', 'inbox'] as const;
type Contender = (typeof CONTENDERS)[number];
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};

const drifted = process.argv.includes('--drift');

/** `body` with two fields the schema does not know after its own: 26 bytes more. */
function driftBody(body: Buffer): Buffer {
  const payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...payload, tier: 'gold', region: 'eu' }));
}

if (process.argv[2] === '--loop') await loop(process.argv[3] as Contender);
else await main();

/** Child: builds one contender, then runs as many deliveries as each stdin line asks. */
async function loop(contender: Contender): Promise<void> {
  const { createMailReceiver } = await import('../src/index.js');
  const { createSqliteInbox } = await import('../src/sqlite.js');
  const { createInbox } = await import('../src/inbox/inbox.js');
  const { openRawSqlite } = await import('../test/support/sqlite.js');
  const dir = mkdtempSync(join(tmpdir(), 'bench-ack-count-'));
  const body = drifted ? driftBody(mailBody(200)) : mailBody(200);
  const signature = signatureOf(body, SECRET);
  let n = 0;
  const headers = () => ({
    'x-svcmail-sig': signature,
    'x-svcmail-event': 'delivered',
    'x-svcmail-id': `dlv_${++n}`,
  });
  const logger = () => {};
  let run: () => unknown;
  if (contender === 'raw' || contender === 'handwritten') {
    const db = openRawSqlite(join(dir, 'raw.sqlite'));
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    const inbox = createSqliteInbox({ path: join(dir, 'raw.sqlite'), table: 'ack_raw' });
    await inbox.migrate();
    await inbox.close();
    // The inbox's columns, its unique dedup key and indexes: the row a hand-written receiver writes.
    const insert = db.prepare(
      `INSERT INTO ack_raw (dedup_key, service, event, delivery_id, event_at, ordering_key, status, run_at, received_at, headers, body) VALUES (?, 'mail', 'delivered', ?, ?, ?, 'received', ?, ?, ?, ?) ON CONFLICT (dedup_key) DO NOTHING`,
    );
    const write = (i: number, headerText: string, messageId: string) => {
      const now = Date.now();
      insert.run(`mail:delivery:dlv_${i}`, `dlv_${i}`, now, messageId, now, now, headerText, body as never);
    };
    if (contender === 'raw') {
      const headerText = JSON.stringify({ 'x-svcmail-event': 'delivered', 'x-svcmail-id': 'dlv_0' });
      run = () => write(++n, headerText, `m${n}`);
    } else {
      // Verify, parse, then INSERT: the same statement, the signature kept with the headers.
      run = () => {
        const h = headers();
        const header = h['x-svcmail-sig'];
        if (header.length !== 71 || !header.startsWith('sha256=')) throw new Error('malformed');
        if (!timingSafeEqual(Buffer.from(signatureOf(body, SECRET)), Buffer.from(header)))
          throw new Error('did not verify');
        const payload = JSON.parse(body.toString('utf8')) as { message_id?: string };
        write(n, JSON.stringify(h), `mail:message:${payload.message_id}`);
      };
    }
  } else if (contender === 'schema') {
    const { mailParseSchemas } = await import('../src/mail/parse-schemas.js');
    const { parseWithMini } = await import('../src/shared/mini-parse.js');
    const schema = mailParseSchemas().get('delivered')!;
    const payload = JSON.parse(body.toString('utf8'));
    run = () => {
      if (!parseWithMini(schema, payload).success) throw new Error('schema refused the body');
    };
  } else {
    const handoff =
      contender === 'handoff'
        ? { enqueue: async () => 'enqueued' as const }
        : contender === 'row'
          ? createInbox(
              {
                dialect: 'sqlite',
                query: async () => [{ id: 1 }],
                exec: async () => {},
                close: async () => {},
              },
              {},
              { now: () => Date.now() } as never,
              'ack_inbox',
            )
          : contender === 'inbox'
            ? // Bounds far above a delivery under callgrind (~50× slower) on a loaded machine: a write
              // that took longer would fail the count, not change it.
              createSqliteInbox({
                path: join(dir, 'inbox.sqlite'),
                table: 'ack_inbox',
                callTimeoutMs: 60_000,
              })
            : undefined;
    if (contender === 'inbox') await (handoff as { migrate(): Promise<void> }).migrate();
    // A long write bound: callgrind stalls the process when counting is switched on, and a delivery
    // then past the default 2 s would be refused (503). The bound's timer is armed either way.
    const receiver = createMailReceiver({
      secret: SECRET,
      logger,
      storeTimeoutMs: 600_000,
      ...(handoff ? { handoff } : {}),
    });
    const expected = handoff ? 'queued' : 'ignored';
    run = async () => {
      const verdict = await receiver.receive({ body, headers: headers() });
      if (verdict.kind !== expected) throw new Error(`${contender}: ${JSON.stringify(verdict)}`);
    };
  }
  const lines = createInterface({ input: process.stdin });
  process.once('SIGTERM', () => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
  process.stdout.write('ready\n');
  for await (const line of lines) {
    for (let i = Number(line); i > 0; i--) {
      const result = run();
      if (result instanceof Promise) await result;
    }
    process.stdout.write('done\n');
  }
}

/** Counts each contender asked for (all by default) and prints instructions per delivery. */
async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => (CONTENDERS as readonly string[]).includes(a));
  const requests = arg('--requests', 5_000);
  const warm = arg('--warm', 5_000);
  for (const contender of (asked.length ? asked : CONTENDERS) as Contender[]) {
    const out = join(tmpdir(), `svc-ack-instructions-${process.pid}-${contender}.out`);
    const child = spawn(
      'valgrind',
      callgrindArgs(
        out,
        fileURLToPath(import.meta.url),
        '--loop',
        contender,
        ...(drifted ? ['--drift'] : []),
      ),
      { stdio: ['pipe', 'pipe', process.env.ACK_BENCH_STDERR ? 'inherit' : 'ignore'] },
    );
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    await lines.next(); // ready
    const step = async (count: number) => {
      child.stdin!.write(`${count}\n`);
      await lines.next();
    };
    await step(warm);
    // A second pass before counting: the harness's own loop (this file's `loop`) deopts when it
    // resumes for a second stdin line and is compiled again some 1,000 deliveries later (V8's
    // --trace-opt: about 10 ms of TurboFan, 6,300–6,600 instructions per delivery of a 5,000-delivery
    // window on Node 20), which is not the contender's work. After 2,000 more, --trace-opt shows no
    // compilation in the counted window.
    await step(2_000);
    execFileSync('callgrind_control', ['-i', 'on', String(child.pid)]);
    await step(requests);
    execFileSync('callgrind_control', ['-i', 'off', String(child.pid)]);
    await stop(child);
    const { total, collector, compiler } = countsOf(readFileSync(out, 'utf8'));
    const keep = process.argv.indexOf('--keep');
    if (keep !== -1) renameSync(out, join(process.argv[keep + 1]!, `${contender}.out`));
    else rmSync(out, { force: true });
    const per = (x: number) => Math.round(x / requests).toLocaleString('en-US');
    console.log(
      `${contender}: ${per(total)} instructions per delivery, ${per(total - collector)} without the garbage collector, ${per(total - collector - compiler)} without it and the JIT compilers (${per(compiler)})`,
    );
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
