// Runs every ```sh / ```bash / ```shell block of README.md, examples/*/README.md and docs/*.md as a
// reader would paste it, and fails on the first command of a block that fails.
//   npx tsx scripts/run-shell-blocks.mts [--verbose] [file.md…]   (all of them without file arguments;
//   --verbose prints every block's output, not only a failed one's; --no-build leaves dist/ as it is)
//
// How the blocks run:
// - The blocks of one markdown file run in order in one bash session, like one terminal: `cd`,
//   `export` and background jobs (`cmd &`) carry over to the next block. A block fails when any of
//   its commands fails as it would under `set -e` (a failed `a && b` does not count); pipes fail
//   with their first failing command (`pipefail`). Each block has 60 seconds.
// - The session starts where a reader of the file stands: the repository root for README.md and
//   docs/*.md, the example's folder for examples/*/README.md ("Run from this folder"). It runs in a
//   fresh temporary copy of the working tree (tracked and untracked-but-not-ignored files, the built
//   dist/, node_modules linked), so files a block writes (captures, .next/) never reach the checkout.
//   dist/ is built first (`npm run build`) when it is missing or older than src/.
// - The environment is this process's, without the variables the examples read (secrets, REDIS_URL,
//   DATABASE_URL: a block sets what it needs), with CI=true and NEXT_TELEMETRY_DISABLED=1.
// - On Linux the whole run happens in private network and PID namespaces (`unshare -n -p`, loopback
//   only) when the machine allows it, so the documented fixed ports (3000, 4400, 6379, 5432) collide
//   with nothing else on the machine and nothing a block started outlives the run; otherwise on the
//   machine's loopback, where a port in use fails its block.
// - At the end of a file, everything its session started is stopped (SIGTERM, then SIGKILL).
//
// Markers: an HTML comment on the line right above the opening fence (invisible on the rendered page),
// one or more clauses separated by `;` or `,`:
//   <!-- shell: skip — REASON -->
//       not run; the reason is printed and must say why (a marker without one fails the run).
//   <!-- shell: ready when "TEXT" -->
//       the block starts something in the background itself (`app &`): the next block waits until
//       TEXT appears in the session's output (within the block's 60 seconds). Several texts:
//       `ready when "A" and "B"`.
//   <!-- shell: server, ready when "TEXT" -->
//       a command that keeps running (an app, the emulator) as a reader runs it in another terminal:
//       started in the background of the session, in its directory and with its variables; the
//       next block waits for TEXT. A server that exits first fails.
//   <!-- shell: needs postgres; server, ready when "TEXT" -->
//   <!-- shell: needs postgres; ready when "TEXT" -->
//       either of the above, with a throwaway PostgreSQL first on 127.0.0.1:5432 (user postgres, no
//       password), for a block whose prose asks for "a PostgreSQL you can write to".
// Whatever a file's blocks started runs until the end of the file.
// A marker anywhere else, or with a clause other than these, fails the run.
//
// Prints each block's file:line and result, the skipped blocks with their reasons, and last
// `shell blocks: N passed, N failed, N skipped`. Exit status 1 when a block failed.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PostgresServer } from '../test/support/postgres-server.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BLOCK_MS = 60_000;
const FENCE_OPEN = /^(\s*)```(sh|bash|shell)\s*$/;
const FENCE_CLOSE = /^\s*```\s*$/;
const MARKER = /^\s*<!--\s*shell:(.*?)-->\s*$/;

/** One shell block and what its marker asks. */
interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  skip?: string;
  /** Run in the background of the session, as in another terminal. */
  server?: boolean;
  /** Texts the output must show before the next block runs. */
  ready?: string[];
  needsPostgres?: boolean;
}

/** The blocks of one markdown file, and the marker mistakes found in it. */
function parse(file: string): { blocks: Block[]; errors: string[] } {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  const errors: string[] = [];
  const used = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i]!);
    if (!open) {
      // Another fence: skip its body, so a ```sh inside a ```markdown sample is not a block.
      if (/^\s*```\S/.test(lines[i]!)) while (++i < lines.length && !FENCE_CLOSE.test(lines[i]!));
      continue;
    }
    const indent = open[1]!.length;
    let end = i + 1;
    while (end < lines.length && !FENCE_CLOSE.test(lines[end]!)) end++;
    const code = lines
      .slice(i + 1, end)
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n');
    const block: Block = { file, line: i + 1, code: `${code}\n` };
    const marker = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
    if (marker) {
      used.add(i - 1);
      const problem = applyMarker(block, marker[1]!.trim());
      if (problem) errors.push(`${file}:${i}: ${problem}`);
    }
    blocks.push(block);
    i = end;
  }
  lines.forEach((l, at) => {
    if (MARKER.test(l) && !used.has(at))
      errors.push(`${file}:${at + 1}: a shell marker not right above a block`);
  });
  return { blocks, errors };
}

/** Reads a marker's clauses into `block`; returns what is wrong with it, if anything. */
function applyMarker(block: Block, body: string): string | undefined {
  const skip = /^skip\b\s*(?:[—–:-]\s*)?(.*)$/s.exec(body);
  if (skip) {
    const reason = skip[1]!.trim();
    if (reason.length < 10) return 'a skip marker needs its reason: <!-- shell: skip — why it cannot run -->';
    block.skip = reason;
    return undefined;
  }
  for (const clause of body.split(/[;,](?=(?:[^"]*"[^"]*")*[^"]*$)/).map((c) => c.trim())) {
    if (clause === 'server') block.server = true;
    else if (clause === 'needs postgres') block.needsPostgres = true;
    else if (/^ready when "[^"]+"(?: and "[^"]+")*$/.test(clause))
      block.ready = [...clause.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    else return `unknown shell marker clause "${clause}"`;
  }
  if (block.server && !block.ready) return 'a server marker needs `ready when "TEXT"`';
  if (block.needsPostgres && !block.ready)
    return '`needs postgres` goes with `ready when "TEXT"` (or `server, ready when "TEXT"`)';
  return undefined;
}

/** The markdown files to run: README.md, examples/*\/README.md, docs/*.md. */
function markdownFiles(): string[] {
  const examples = readdirSync(join(ROOT, 'examples'))
    .map((d) => `examples/${d}/README.md`)
    .filter((f) => existsSync(join(ROOT, f)));
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', ...examples.sort(), ...docs.sort()];
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ unless it is newer than every source. */
function ensureBuilt(): void {
  const marker = join(ROOT, 'dist', 'cli.js');
  if (existsSync(marker) && statSync(marker).mtimeMs > newestMtime(join(ROOT, 'src'))) return;
  console.log('building dist/ (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A fresh copy of the working tree with dist/ and a link to node_modules; timestamps kept. */
function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-shell-blocks-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && f !== 'node_modules' && !f.startsWith('node_modules/'));
  for (const file of files) {
    const from = join(ROOT, file);
    if (!existsSync(from) || statSync(from).isDirectory()) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(from, join(dir, file), { preserveTimestamps: true });
  }
  if (existsSync(join(ROOT, 'dist')))
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true, preserveTimestamps: true });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
  return dir;
}

/** Everything under `pid`, from /proc (a server's workers may leave its process group). */
function descendants(pid: number): number[] {
  const all: number[] = [];
  const byParent = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue;
    const ppid = Number(fields[1]);
    byParent.set(ppid, [...(byParent.get(ppid) ?? []), Number(entry)]);
  }
  const pending = [pid];
  for (let p = pending.shift(); p !== undefined; p = pending.shift()) {
    const children = byParent.get(p) ?? [];
    all.push(...children);
    pending.push(...children);
  }
  return all;
}

/** The fields of /proc/PID/stat after the command name: state, ppid, …, starttime at [19]. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Running, not a zombie left for a parent that does not reap. */
const alive = (pid: number) => {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One bash session: blocks are sourced into it through fd 3, it reports on fd 4. */
class Session {
  readonly child: ChildProcess;
  output = '';
  #status = '';
  #dir: string;
  #count = 0;
  /** Every process seen under the session, with its start time: a job outlives a shell that exits. */
  #seen = new Map<number, string>();

  constructor(cwd: string, scratch: string) {
    this.#dir = scratch;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CI: 'true',
      NEXT_TELEMETRY_DISABLED: '1',
      npm_config_update_notifier: 'false',
    };
    for (const name of ['SVC_MAIL_WEBHOOK_SECRET', 'SVC_CRM_WEBHOOK_SECRET', 'REDIS_URL', 'DATABASE_URL'])
      delete env[name];
    // The driver: read a command line from fd 3 and eval it here, so the blocks share this shell.
    const driver = [
      // Job control as in a terminal: each background job in its own process group, so `kill %1`
      // stops the whole job (npx and the app under it).
      'set -m -E -o pipefail',
      '__svc_run() {',
      // Only commands of the block count: not `source` itself, whose status is merely the last
      // command's (a final `false && x` is no failure under `set -e` either).
      '  local __svc_failed=0 __svc_file="$2"',
      `  trap '[[ "\${BASH_SOURCE[0]}" == "$__svc_file" ]] && __svc_failed=1' ERR`,
      '  source "$2" </dev/null 3<&- 4>&-',
      '  trap - ERR',
      '  printf "done %s %s\\n" "$1" "$__svc_failed" >&4',
      '}',
      '__svc_start() {',
      '  ( trap - ERR; source "$2" ) </dev/null 3<&- 4>&- &',
      '  printf "started %s %s\\n" "$1" "$!" >&4',
      '}',
      'while IFS= read -r -u 3 __svc_line; do eval "$__svc_line"; done',
    ].join('\n');
    this.child = spawn('bash', ['-c', driver], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString('utf8');
    };
    this.child.stdout!.on('data', collect);
    this.child.stderr!.on('data', collect);
    (this.child.stdio[4] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => {
      this.#status += chunk.toString('utf8');
    });
  }

  /** Notes the processes under the session now (called after each block and while waiting). */
  track(): void {
    for (const pid of descendants(this.child.pid!)) {
      const started = statFields(pid)?.[19];
      if (started) this.#seen.set(pid, started);
    }
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Sends a block; resolves with what fd 4 answered (`done N 0|1`, `started N PID`) or a timeout. */
  async #send(
    kind: '__svc_run' | '__svc_start',
    code: string,
    deadline: number,
  ): Promise<string[] | 'timeout' | 'exited'> {
    const n = ++this.#count;
    const file = join(this.#dir, `block-${n}.sh`);
    writeFileSync(file, code);
    (this.child.stdio[3] as NodeJS.WritableStream).write(`${kind} ${n} ${file}\n`);
    const expect = kind === '__svc_run' ? 'done' : 'started';
    for (;;) {
      const line = this.#status.split('\n').find((l) => l.startsWith(`${expect} ${n} `));
      if (line) return line.split(' ');
      if (this.exited) return 'exited';
      if (Date.now() > deadline) return 'timeout';
      await sleep(50);
    }
  }

  /** Runs a block to its end: undefined when it passed, else why it failed. */
  async run(code: string): Promise<string | undefined> {
    const answer = await this.#send('__svc_run', code, Date.now() + BLOCK_MS);
    if (answer === 'timeout') return `still running after ${BLOCK_MS / 1000} s`;
    if (answer === 'exited') return `the shell exited (${this.child.exitCode ?? this.child.signalCode})`;
    return answer[2] === '0' ? undefined : 'a command failed';
  }

  /** Starts a server block in the background; its pid, or why it could not start. */
  async start(code: string): Promise<number | string> {
    const answer = await this.#send('__svc_start', code, Date.now() + BLOCK_MS);
    if (!Array.isArray(answer)) return `the shell ${answer === 'timeout' ? 'did not answer' : 'exited'}`;
    return Number(answer[2]);
  }

  /** Waits until every text of `ready` appeared in the output written since `from`. */
  async waitFor(ready: string[], from: number, deadline: number, pid?: number): Promise<string | undefined> {
    for (;;) {
      this.track();
      const seen = this.output.slice(from);
      const missing = ready.filter((text) => !seen.includes(text));
      if (missing.length === 0) return undefined;
      const list = missing.map((t) => `"${t}"`).join(' and ');
      if (pid !== undefined && !alive(pid)) return `it exited before printing ${list}`;
      if (this.exited) return `the shell exited before printing ${list}`;
      if (Date.now() > deadline) return `${list} not printed within ${BLOCK_MS / 1000} s`;
      await sleep(50);
    }
  }

  /**
   * Stops the session and everything it started: SIGTERM to each process of the tree and its process
   * group (background jobs have their own), then SIGKILL to what is left.
   */
  async stop(): Promise<void> {
    this.track();
    const pid = this.child.pid!;
    // The same pid with the same start time: not a newer process that reused the number.
    const ours = (p: number) => p === pid || statFields(p)?.[19] === this.#seen.get(p);
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const pids = [pid, ...new Set([...this.#seen.keys(), ...descendants(pid)])].filter(
        (p) => alive(p) && ours(p),
      );
      for (const p of pids) {
        for (const target of [-p, p]) {
          try {
            process.kill(target, signal);
          } catch {
            // not a group leader, or gone already
          }
        }
      }
      const end = Date.now() + 5_000;
      while (pids.some(alive) && Date.now() < end) await sleep(100);
      if (!pids.some(alive)) break;
    }
  }
}

/** The last lines of `text`, indented, for a failure report. */
const tail = (text: string, lines = 40) =>
  text
    .trimEnd()
    .split('\n')
    .slice(-lines)
    .map((l) => `    | ${l}`)
    .join('\n');

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

async function runFile(file: string, blocks: Block[], counts: Counts): Promise<void> {
  const runnable = blocks.filter((b) => !b.skip);
  for (const b of blocks.filter((b) => b.skip)) {
    counts.skipped++;
    console.log(`skip  ${b.file}:${b.line}: ${b.skip}`);
  }
  if (runnable.length === 0) return;
  const copy = copyTree();
  const scratch = mkdtempSync(join(tmpdir(), 'svc-shell-session-'));
  const cwd = file.startsWith('examples/') ? join(copy, dirname(file)) : copy;
  const session = new Session(cwd, scratch);
  let postgres: PostgresServer | undefined;
  let broken: string | undefined;
  try {
    for (const block of runnable) {
      const started = performance.now();
      const from = session.output.length;
      let problem = broken;
      if (!problem && block.needsPostgres && !postgres) {
        const { startPostgres } = await import('../test/support/postgres-server.js');
        postgres = await startPostgres({ port: 5432 }).catch((error: Error) => {
          problem = `no PostgreSQL on 127.0.0.1:5432: ${error.message}`;
          return undefined;
        });
      }
      if (!problem) {
        const deadline = Date.now() + BLOCK_MS;
        let pid: number | undefined;
        if (block.server) {
          const launched = await session.start(block.code);
          if (typeof launched === 'string') problem = launched;
          else pid = launched;
        } else {
          problem = await session.run(block.code);
        }
        session.track();
        if (!problem && block.ready) problem = await session.waitFor(block.ready, from, deadline, pid);
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (problem) {
        counts.failed++;
        console.log(`FAIL  ${block.file}:${block.line} (${seconds} s): ${problem}`);
        console.log(tail(block.code, 20).replaceAll('    |', '    $'));
        if (!broken) console.log(tail(session.output.slice(from)));
        // A block that did not finish leaves the session in an unknown state: the rest are not run.
        if (session.exited || problem.startsWith('still running'))
          broken ??= 'not run: an earlier block of this file broke the session';
      } else {
        counts.passed++;
        console.log(`ok    ${block.file}:${block.line}${block.server ? ' (server)' : ''} (${seconds} s)`);
        if (verbose) console.log(tail(session.output.slice(from)));
      }
    }
  } finally {
    await session.stop();
    await postgres?.close();
    rmSync(copy, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Re-runs this script in a private network namespace when the machine allows it. */
function isolate(): void {
  if (process.platform !== 'linux' || process.env.SVC_SHELL_BLOCKS_NETNS) return;
  // A network namespace, and a PID namespace whose first process is this script: whatever a block
  // leaves behind ends with it (--kill-child: also when this run is killed). As root no user
  // namespace (PostgreSQL then drops to `nobody` as the tests do); otherwise one, to be allowed.
  const unshare = [
    ...(process.getuid?.() === 0 ? [] : ['-r']),
    '-n',
    '-p',
    '-f',
    '--mount-proc',
    '--kill-child',
  ];
  const up = 'ip link set lo up';
  const probe = spawnSync('unshare', [...unshare, 'sh', '-c', up], { stdio: 'ignore' });
  if (probe.status !== 0) {
    console.log('note: no private network namespace (unshare -n): blocks use the machine loopback');
    return;
  }
  const result = spawnSync(
    'unshare',
    [
      ...unshare,
      'sh',
      '-c',
      `${up} && exec "$@"`,
      'sh',
      process.execPath,
      ...process.execArgv,
      ...process.argv.slice(1),
    ],
    { stdio: 'inherit', env: { ...process.env, SVC_SHELL_BLOCKS_NETNS: '1' } },
  );
  process.exit(result.status ?? 1);
}

isolate();
const started = performance.now();
const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const named = args.filter((a) => !a.startsWith('--'));
const files = named.length > 0 ? named.map((f) => relative(ROOT, resolve(f))) : markdownFiles();
const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
const parsed = files.map((file) => ({ file, ...parse(file) }));
for (const { errors } of parsed) {
  for (const error of errors) {
    counts.failed++;
    console.log(`FAIL  ${error}`);
  }
}
if (!args.includes('--no-build') && parsed.some((p) => p.blocks.some((b) => !b.skip))) ensureBuilt();
for (const { file, blocks } of parsed) await runFile(file, blocks, counts);
console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
console.log(`shell blocks: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
process.exit(counts.failed > 0 ? 1 : 0);
