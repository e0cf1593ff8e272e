/**
 * The walk of one inbox row from its claim to `handled`, counted: which source files of the library
 * it enters and how many function entries each, read from V8's precise coverage with call counts
 * (node:inspector, in this process; exact counts, no sampling). One worker (`runOnce`, one row in
 * flight, no transaction adapter, a no-op handler) on a SQLite file; counts after 20 rows of
 * warm-up, over `--rows` rows (one `runOnce` runs them one after another, plus one empty claim), per row.
 *
 *   npx tsx bench/claim-walk.mts [--rows 10] [--by-function]
 *
 * "Entries" counts every call of a function of src/ (a callback, a getter, a method of an object a
 * factory returned), whoever called it. A call from one function of a file to another of the same
 * file is an entry too; the entries into files other than the caller's are at most the total.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailReceiver } from '../src/index.js';
import { createInboxWorker, createSqliteInbox } from '../src/sqlite.js';
import { createSignedRequest } from '../src/testing/index.js';

const SECRET = 'whsec_bench_inbox_0123456789abcdefghij';
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const ROWS = arg('--rows', 10);
const WARM = 20;
const src = new URL('../src/', import.meta.url).href;

const dir = mkdtempSync(join(tmpdir(), 'claim-walk-'));
const inbox = createSqliteInbox({ path: join(dir, 'app.sqlite'), table: 'walk_inbox' });
await inbox.migrate();
const receiver = createMailReceiver({ secret: SECRET, handoff: inbox, logger: () => {} });
receiver.on('delivered', () => {});
/** Writes `count` deliveries (rows of their own keys) through the receiver. */
async function seed(from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const request = await createSignedRequest({
      service: 'mail',
      event: 'delivered',
      secret: SECRET,
      payload: { message_id: `m_${i}` },
    });
    if ((await receiver.handle(request)).status !== 200) throw new Error('seed');
  }
}
const worker = createInboxWorker({ receiver, inbox });
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
await seed(0, WARM);
if ((await worker.runOnce()) !== WARM) throw new Error('warm-up');
await seed(WARM, ROWS);
await session.post('Profiler.takePreciseCoverage'); // resets the counts
if ((await worker.runOnce()) !== ROWS) throw new Error('rows');
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
if ((await inbox.stats()).rows.handled !== WARM + ROWS) throw new Error('not all rows handled');
await inbox.close();
rmSync(dir, { recursive: true, force: true });

const byFile = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const script of result) {
  if (!script.url.startsWith(src)) continue;
  const file = fileURLToPath(script.url).slice(fileURLToPath(src).length - 'src/'.length);
  for (const fn of script.functions) {
    // The first range of a function is its whole body; its count is the function's entries.
    const count = fn.ranges[0]?.count ?? 0;
    if (count === 0 || fn.functionName === '') {
      // A module's top level (unnamed, whole script) ran at import, not in the walk.
      if (fn.functionName === '' && fn.ranges[0]?.startOffset === 0) continue;
    }
    if (count === 0) continue;
    byFile.set(file, (byFile.get(file) ?? 0) + count);
    const name = `${file} ${fn.functionName || '(anonymous)'}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + count);
  }
}
const per = (n: number) => (n / ROWS).toFixed(1).replace(/\.0$/, '');
const total = [...byFile.values()].reduce((a, b) => a + b, 0);
console.log(
  `one row from its claim to handled: ${per(total)} function entries in ${byFile.size} files of src/`,
);
for (const [file, n] of [...byFile].sort((a, b) => b[1] - a[1]))
  console.log(`  ${per(n).padStart(5)}  ${file}`);
if (process.argv.includes('--by-function'))
  for (const [name, n] of [...byFunction].sort((a, b) => b[1] - a[1]))
    console.log(`  ${per(n).padStart(5)}  ${name}`);
