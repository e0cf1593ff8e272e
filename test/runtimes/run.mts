/**
 * The runtime suite: test/runtimes/app.mjs (both receivers through @svc/webhooks/fetch, created in
 * global scope) served by every runtime the README names, and checked over HTTP by CHECKS
 * (checks.ts), against the BUILT package: dist/ as `npm run build` writes it, installed into a
 * temporary app directory with zod. A runtime that cannot be found or started FAILS; nothing is
 * skipped.
 *
 *   npm run build && npx tsx test/runtimes/run.mts --node "$(command -v node)" --node ~/node22/bin/node …
 *
 * Runtimes: one Node per `--node` (Node 20, 22 and 24 are all required; without `--node`, the first
 * `node` on PATH outside node_modules/.bin and the repository's node_modules/.bin/node), the newest of
 * them again with node:crypto out of reach, Bun and Deno from node_modules/.bin (Deno as users run it
 * and with --unstable-no-legacy-abort, docs/adapters-tested.md), and workerd through miniflare, without and
 * with `nodejs_compat`. Every runtime must also write nothing unexpected on stderr. Besides,
 * examples/cloudflare-worker is type-checked as a Workers project (workers-types, no @types/node).
 *
 * Prints `ok <runtime>: <check>` or `FAIL <runtime>: <check>: <why>` per check (.ci/run counts
 * them), then a table of runtime, version, crypto path and checks passed; exit 1 when any failed.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve, sep } from 'node:path';
import { root } from '../package/dist.js';
import { CHECKS, info, SETTINGS } from './checks.js';
import { bundleWorker, createAppDir, startWorker, workerdVersion } from './support/workers.js';

const REQUIRED_NODE_MAJORS = [20, 22, 24];
const START_MS = 30_000;
// Deno.serve's one-time notice in its legacy abort mode, explained in docs/adapters-fetch.md ("fetch").
const DENO_LEGACY_NOTICE =
  /^Deno\.serve: request\.signal aborts on successful responses \(legacy behavior\)\./;

interface Started {
  base: URL;
  output(): string;
  stop(): Promise<void>;
}

interface Target {
  runtime: string;
  version: string;
  start(work: string): Promise<Started>;
  /** Lines allowed on stderr besides nothing. */
  allowedOutput?: RegExp;
}

interface Result {
  runtime: string;
  version: string;
  crypto: string;
  passed: number;
  total: number;
  lines: string[];
}

function nodeBinaries(): string[] {
  const given: string[] = [];
  for (let i = 2; i < process.argv.length; i++) {
    if (process.argv[i] === '--node' && process.argv[i + 1]) given.push(resolve(process.argv[++i]!));
  }
  if (given.length > 0) return given;
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir && !dir.includes(`node_modules${sep}.bin`))
    .map((dir) => join(dir, 'node'))
    .find((bin) => existsSync(bin));
  return [...(onPath ? [onPath] : []), join(root, 'node_modules/.bin/node')];
}

function versionOf(bin: string, flag = '--version'): string | undefined {
  try {
    return execFileSync(bin, [flag], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** A runtime process serving app.mjs; ready when it prints `listening <port>`. */
function serve(bin: string, args: string[]): (work: string) => Promise<Started> {
  return (work) =>
    new Promise((resolve, reject) => {
      const child: ChildProcess = spawn(bin, args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => fail(new Error(`not listening after ${START_MS} ms`)), START_MS);
      const stop = () =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('exit', () => done());
          child.kill('SIGKILL');
        });
      const fail = (error: Error) => {
        clearTimeout(timer);
        void stop();
        reject(new Error(`${error.message}\n${stderr.trim()}`));
      };
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        const port = /listening (\d+)/.exec(stdout)?.[1];
        if (port === undefined) return;
        clearTimeout(timer);
        resolve({ base: new URL(`http://127.0.0.1:${port}/`), output: () => stderr, stop });
      });
      child.once('error', fail);
      child.once('exit', (code, signal) => fail(new Error(`exited (${code ?? signal}) before listening`)));
    });
}

function workerd(flags: string[]): (work: string) => Promise<Started> {
  return async (work) => {
    const worker = await startWorker(await bundleWorker(join(work, 'app.mjs'), work), {}, flags);
    return { base: worker.url, output: worker.output, stop: worker.close };
  };
}

function targets(): { found: Target[]; missing: Result[] } {
  const found: Target[] = [];
  const missing: Result[] = [];
  const lost = (runtime: string, why: string) =>
    missing.push({
      runtime,
      version: '-',
      crypto: '-',
      passed: 0,
      total: 1,
      lines: [`FAIL ${runtime}: found: ${why}`],
    });
  const nodes = new Map<number, { bin: string; version: string }>();
  for (const bin of nodeBinaries()) {
    const version = versionOf(bin)?.replace(/^v/, '');
    if (version === undefined) lost(`node (${bin})`, 'does not run');
    else nodes.set(Number(version.split('.')[0]), { bin, version });
  }
  for (const major of REQUIRED_NODE_MAJORS) {
    const node = nodes.get(major);
    if (!node) lost(`node ${major}`, `no Node ${major} binary: pass --node /path/to/node${major}/bin/node`);
    else
      found.push({
        runtime: `node ${major}`,
        version: node.version,
        start: serve(node.bin, ['serve-node.mjs']),
      });
  }
  const newest = [...nodes.entries()].sort(([a], [b]) => b - a)[0]?.[1];
  if (newest)
    found.push({
      runtime: `node ${newest.version.split('.')[0]} without node:crypto`,
      version: newest.version,
      start: serve(newest.bin, ['serve-node.mjs', '--web-crypto-only']),
    });
  const bun = join(root, 'node_modules/.bin/bun');
  const bunVersion = versionOf(bun);
  if (bunVersion === undefined) lost('bun', `${bun} does not run (npm ci installs it)`);
  else found.push({ runtime: 'bun', version: bunVersion, start: serve(bun, ['serve-bun.mjs']) });
  const deno = join(root, 'node_modules/.bin/deno');
  const denoVersion = versionOf(deno)?.match(/^deno (\S+)/)?.[1];
  const denoRun = ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-read', '--allow-env'];
  if (denoVersion === undefined) lost('deno', `${deno} does not run (npm ci installs it)`);
  else {
    found.push({
      runtime: 'deno',
      version: denoVersion,
      start: serve(deno, [...denoRun, 'serve-deno.mjs']),
      allowedOutput: DENO_LEGACY_NOTICE,
    });
    found.push({
      runtime: 'deno --unstable-no-legacy-abort',
      version: denoVersion,
      start: serve(deno, [...denoRun, '--unstable-no-legacy-abort', 'serve-deno.mjs']),
    });
  }
  let workerdOk = true;
  try {
    workerdVersion();
  } catch {
    workerdOk = false;
    lost('workerd', 'miniflare/workerd are not installed (npm ci installs them)');
  }
  if (workerdOk) {
    found.push({ runtime: 'workerd (miniflare)', version: workerdVersion(), start: workerd([]) });
    found.push({
      runtime: 'workerd, nodejs_compat',
      version: workerdVersion(),
      start: workerd(['nodejs_compat']),
    });
  }
  return { found, missing };
}

/**
 * Types as a Workers project has them: examples/cloudflare-worker compiled with its own tsconfig
 * (`@cloudflare/workers-types`, no `@types/node`), `@svc/webhooks` resolving to dist/*.d.ts.
 */
function workersTypes(): Promise<Result> {
  const name =
    'examples/cloudflare-worker type-checks against dist/*.d.ts with @cloudflare/workers-types alone';
  const tsc = join(root, 'node_modules/.bin/tsc');
  const result: Result = {
    runtime: 'tsc, @cloudflare/workers-types',
    version: versionOf(tsc)?.replace(/^Version /, '') ?? '-',
    crypto: '-',
    passed: 0,
    total: 1,
    lines: [],
  };
  return new Promise((done) => {
    const child = spawn(tsc, ['-p', join(root, 'examples/cloudflare-worker')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', (error) => {
      result.lines.push(`FAIL ${result.runtime}: ${name}: ${oneLine(error)}`);
      done(result);
    });
    child.once('exit', (code) => {
      if (code === 0) result.passed = 1;
      result.lines.push(
        code === 0 ? `ok ${result.runtime}: ${name}` : `FAIL ${result.runtime}: ${name}: ${oneLine(output)}`,
      );
      done(result);
    });
  });
}

async function runTarget(target: Target, work: string): Promise<Result> {
  const { runtime, version } = target;
  const result: Result = { runtime, version, crypto: '-', passed: 0, total: CHECKS.length + 2, lines: [] };
  const record = (ok: boolean, name: string, detail?: string) => {
    if (ok) result.passed++;
    result.lines.push(
      `${ok ? 'ok' : 'FAIL'} ${runtime}: ${name}${detail ? `${ok ? ' — ' : ': '}${detail}` : ''}`,
    );
  };
  let started: Started;
  try {
    started = await target.start(work);
    const about = await info(started.base);
    result.crypto = about.nodeCrypto ? 'node:crypto' : 'Web Crypto';
    record(true, 'starts and serves', `${about.name}, process: ${about.process}`);
  } catch (error) {
    record(false, 'starts and serves', oneLine(error));
    for (const check of CHECKS) record(false, check.name, 'not run: the runtime did not start');
    record(false, 'nothing unexpected on stderr', 'not run: the runtime did not start');
    return result;
  }
  try {
    for (const check of CHECKS) {
      try {
        record(true, check.name, await check.run(started.base));
      } catch (error) {
        record(false, check.name, oneLine(error));
      }
    }
  } finally {
    await started.stop();
  }
  const unexpected = started
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '' && !target.allowedOutput?.test(line));
  record(
    unexpected.length === 0,
    'nothing unexpected on stderr',
    unexpected.length > 0
      ? unexpected.slice(0, 5).join(' | ')
      : target.allowedOutput?.test(started.output())
        ? 'only the documented Deno.serve notice'
        : undefined,
  );
  return result;
}

function oneLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error)
    .split('\n')
    .slice(0, 4)
    .join(' | ');
}

async function main(): Promise<number> {
  const began = Date.now();
  const app = createAppDir(join(root, 'dist'), 'svc-runtime-suite-');
  try {
    for (const file of ['app.mjs', 'serve-node.mjs', 'serve-bun.mjs', 'serve-deno.mjs'])
      cpSync(new URL(file, import.meta.url), join(app.dir, file));
    writeFileSync(join(app.dir, 'settings.mjs'), `export default ${JSON.stringify(SETTINGS)};\n`);
    writeFileSync(join(app.dir, 'package.json'), '{ "private": true, "type": "module" }\n');
    const { found, missing } = targets();
    const results = [
      ...missing,
      ...(await Promise.all([...found.map((target) => runTarget(target, app.dir)), workersTypes()])),
    ];
    for (const result of results) console.log(result.lines.join('\n'));
    const passed = results.reduce((sum, r) => sum + r.passed, 0);
    const total = results.reduce((sum, r) => sum + r.total, 0);
    console.log(
      `\nruntime suite: the built package (dist/) on ${results.length - 1} runtimes and the Workers types, ${((Date.now() - began) / 1000).toFixed(1)} s\n`,
    );
    console.log('| runtime | version | crypto | checks passed |\n|---|---|---|---|');
    for (const r of results)
      console.log(`| ${r.runtime} | ${r.version} | ${r.crypto} | ${r.passed}/${r.total} |`);
    console.log(`\nruntime checks: ${passed} passed, ${total - passed} failed`);
    return passed === total ? 0 : 1;
  } finally {
    app.close();
  }
}

process.exitCode = await main();
