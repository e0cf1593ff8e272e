/**
 * The walk of one inbox row from its claim to `handled`, counted: which source files of the library
 * it enters and how many function entries each, read from V8's precise coverage with call counts
 * (node:inspector, in this process; exact counts, no sampling). One worker (`runOnce`, one row in
 * flight, no transaction adapter, a no-op handler) on a SQLite file; counts after 20 rows of
 * warm-up, over `--rows` rows (one `runOnce` runs them one after another, plus one empty claim), per row.
 *
 *   npx tsx bench/claim-walk.mts [--rows 10] [--by-function] [--by-edge]
 *
 * "Entries" counts every call of a function of src/ (a callback, a getter, a method of an object a
 * factory returned), whoever called it. A call from one function of a file to another of the same
 * file is an entry too; the entries into files other than the caller's are at most the total.
 *
 * "Calls into other files" counts only the entries whose direct caller is a function of another file
 * of src/, read from the stack at each entry: a second pass of `--rows` rows runs with a breakpoint
 * at the start of every function the first pass entered, whose condition records the caller's file
 * and never pauses. An entry with no caller in src/ (a promise job resuming a callback, a driver's
 * callback, a timer) is counted apart, as "entered from outside src/". `--by-edge`: the calls per
 * pair of files.
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

// Second pass: who calls each function the first pass entered.
const srcPath = fileURLToPath(src);
const fileOf = (path: string) => path.slice(srcPath.length - 'src/'.length);
const callees: string[] = [];
const edges = new Map<string, number>();
let recording = false;
let fromOutside = 0;
const entered = new Set<string>();
(globalThis as { __walkHit?: unknown }).__walkHit = (id: number, stack: string) => {
  if (!recording) return;
  const callee = callees[id] as string;
  entered.add(callee);
  // Frames: the condition's eval, the callee, its caller.
  const caller = /\((?:file:\/\/)?([^()]*?):\d+:\d+\)$|at (?:file:\/\/)?(\/[^ ]*?):\d+:\d+$/.exec(
    stack.split('\n')[3]?.trim() ?? '',
  );
  const path = caller?.[1] ?? caller?.[2];
  if (!path?.startsWith(srcPath)) {
    fromOutside++;
    return;
  }
  const from = fileOf(path);
  if (from === callee) return;
  const edge = `${from} -> ${callee}`;
  edges.set(edge, (edges.get(edge) ?? 0) + 1);
};
await session.post('Debugger.enable');
for (const script of result) {
  if (!script.url.startsWith(src)) continue;
  const { scriptSource } = await session.post('Debugger.getScriptSource', {
    scriptId: script.scriptId,
  });
  const lineStarts = [0];
  for (let i = 0; i < scriptSource.length; i++) if (scriptSource.charCodeAt(i) === 10) lineStarts.push(i + 1);
  for (const fn of script.functions) {
    const range = fn.ranges[0];
    if (!range || range.count === 0 || (fn.functionName === '' && range.startOffset === 0)) continue;
    let line = 0;
    while (line + 1 < lineStarts.length && (lineStarts[line + 1] as number) <= range.startOffset) line++;
    const id = callees.push(fileOf(fileURLToPath(script.url))) - 1;
    await session.post('Debugger.setBreakpoint', {
      location: {
        scriptId: script.scriptId,
        lineNumber: line,
        columnNumber: range.startOffset - (lineStarts[line] as number),
      },
      condition: `globalThis.__walkHit(${id}, new Error().stack), false`,
    });
  }
}
await seed(WARM + ROWS, ROWS);
recording = true;
if ((await worker.runOnce()) !== ROWS) throw new Error('rows, second pass');
recording = false;
await session.post('Debugger.disable');
session.disconnect();
if ((await inbox.stats()).rows.handled !== WARM + 2 * ROWS) throw new Error('not all rows handled');
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
const calls = [...edges.values()].reduce((a, b) => a + b, 0);
console.log(
  `calls into other files of src/: ${per(calls)} per row, into ${entered.size} files; entered from outside src/: ${per(fromOutside)}`,
);
if (process.argv.includes('--by-edge'))
  for (const [edge, n] of [...edges].sort((a, b) => b[1] - a[1]))
    console.log(`  ${per(n).padStart(5)}  ${edge}`);
if (process.argv.includes('--by-function'))
  for (const [name, n] of [...byFunction].sort((a, b) => b[1] - a[1]))
    console.log(`  ${per(n).padStart(5)}  ${name}`);
