/**
 * The worker side of `bench/inbox.mts`'s backlog run, in a process of its own: the process that seeded
 * the backlog holds the seeding's garbage and page cache, so the worker's memory is measured here,
 * from a fresh start. Runs `createInboxWorker` (`concurrency` 8) over `table` until RUN rows are
 * handled, sampling RSS and the heap after a full collection, then times three `inbox.stats()`
 * calls over the table, and prints it all as one JSON line. Started by `bench/inbox.mts` (`node --expose-gc --import tsx`), not by hand:
 *
 *   inbox-backlog-worker.mts <sqlite|postgres> <file path or connection string> <table> <run> <samples>
 */
import pg from 'pg';
import { createMailReceiver } from '../src/index.js';
import { createInboxWorker, createPostgresInbox, type Inbox } from '../src/postgres.js';
import { createSqliteInbox } from '../src/sqlite.js';

const [dialect, target, table, runArg, samplesArg] = process.argv.slice(2);
const RUN = Number(runArg);
const SAMPLES = Number(samplesArg);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !target || !table || !(RUN > 0) || !(SAMPLES > 0))
  throw new Error(
    'usage: node --expose-gc --import tsx inbox-backlog-worker.mts <dialect> <target> <table> <run> <samples>',
  );

const pool = dialect === 'postgres' ? new pg.Pool({ connectionString: target, max: 10 }) : undefined;
pool?.on('error', () => {});
const inbox: Inbox = pool
  ? createPostgresInbox({ client: pool, table })
  : createSqliteInbox({ path: target, table });
// The same secret as bench/inbox.mts: the rows' job MACs are made with it.
const receiver = createMailReceiver({ secret: 'whsec_bench_inbox_0123456789abcdefghij', logger: () => {} });

type Sample = {
  handled: number;
  seconds: number;
  rssMb: number;
  heapMb: number;
  /** The V8 heap's reserved size (its young generation grows with the allocation rate). */
  heapTotalMb: number;
  externalMb: number;
};
const samples: Sample[] = [];
const started = process.hrtime.bigint();
const sample = (handled: number) => {
  gc();
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  samples.push({
    handled,
    seconds,
    rssMb: rss / 2 ** 20,
    heapMb: heapUsed / 2 ** 20,
    heapTotalMb: heapTotal / 2 ** 20,
    externalMb: external / 2 ** 20,
  });
};
const every = Math.max(1, Math.floor(RUN / SAMPLES));
let handled = 0;
let done!: () => void;
const all = new Promise<void>((resolve) => {
  done = resolve;
});
receiver.on('delivered', () => {
  handled++;
  if (handled % every === 0) sample(handled);
  if (handled === RUN) done();
});
sample(0);
const worker = createInboxWorker({ receiver, inbox, concurrency: 8, pollMs: 20 });
worker.start();
await all;
await worker.stop();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
// What one depth reading (`inbox.stats()`: rows by status, the oldest pending row) costs on this table.
const statsMs: number[] = [];
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  await inbox.stats();
  statsMs.push(performance.now() - t0);
}
await inbox.close();
await pool?.end();
console.log(JSON.stringify({ rate: RUN / seconds, samples, statsMs }));
