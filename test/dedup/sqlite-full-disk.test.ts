/**
 * The SQLite store on a real full filesystem (a 1 MiB tmpfs filled with dd), with each SQLite driver
 * of this machine (better-sqlite3 on Node 20, node:sqlite on Node 22.13+, bun:sqlite): a claim that
 * could not be written is never answered `claimed`. One delivery sent three times runs its handler
 * at most once, new deliveries are answered 503 `store_unavailable`, and every delivery answered 200
 * is in the file once the disk has room again. Mounting needs root (CI runs as root).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openRawSqlite } from '../support/sqlite.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/sqlite-full-disk.ts', import.meta.url));
const isRoot = process.getuid?.() === 0;

const packageNode = join(ROOT, 'node_modules/.bin/node');
const bun = join(ROOT, 'node_modules/.bin/bun');
// The machine's own node (the first outside node_modules: npm puts the `node` package first), the
// `node` package's, and Bun: better-sqlite3, node:sqlite and bun:sqlite where those versions have them.
const systemNode = (process.env.PATH ?? '')
  .split(':')
  .find((part) => part && !part.includes('node_modules') && existsSync(join(part, 'node')));
const nodes = [systemNode ? join(systemNode, 'node') : undefined, process.execPath, packageNode]
  .filter((path): path is string => path !== undefined && existsSync(path))
  .filter((path, i, all) => all.findIndex((other) => realpathSync(other) === realpathSync(path)) === i);
const runtimes = [
  ...nodes.map((path) => ({ name: `node at ${path}`, command: path, args: ['--import', 'tsx'] })),
  ...(existsSync(bun) ? [{ name: 'bun', command: bun, args: [] }] : []),
];

const base = mkdtempSync(join(tmpdir(), 'svc-sqlite-full-'));
const mounts: string[] = [];
afterAll(() => {
  for (const dir of mounts) spawnSync('umount', [dir]);
  rmSync(base, { recursive: true, force: true });
});

/** A new, empty 1 MiB tmpfs. */
function smallDisk(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) throw new Error(`mount failed: ${mounted.stderr}`);
  mounts.push(dir);
  return dir;
}

interface Report {
  runtime: string;
  driver: string;
  before: number;
  repeatedRuns: number;
  runs: Record<string, number>;
  answers: { id: string; status: number; code?: string }[];
}

function runFixture(command: string, args: string[], dir: string): Promise<Report> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, FIXTURE, dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`exited ${code}: ${err.slice(-2000)}${out}`));
      else resolve(JSON.parse(last) as Report);
    });
  });
}

describe.skipIf(!isRoot)('a full disk (a filled 1 MiB tmpfs; mounting it needs root)', () => {
  it.each(runtimes.map((runtime) => [runtime.name, runtime] as const))(
    'with %s: no claim answered without being written, 503 store_unavailable instead',
    async (_name, runtime) => {
      const dir = smallDisk(`disk${mounts.length}`);
      const report = await runFixture(runtime.command, runtime.args, dir);
      expect(report.before).toBe(200);
      // The delivery sent three times ran its handler at most once; no handler ran twice.
      expect(report.repeatedRuns).toBeLessThanOrEqual(1);
      expect(Math.max(0, ...Object.values(report.runs))).toBe(1);
      const refused = report.answers.filter((a) => a.status === 503);
      expect(refused.every((a) => a.code === 'store_unavailable')).toBe(true);
      expect(report.answers.every((a) => a.status === 200 || a.status === 503)).toBe(true);
      expect(refused.length).toBeGreaterThan(0);
      // Room again: every delivery answered 200 is a completed record in the file; none refused is.
      rmSync(join(dir, 'fill'));
      const raw = openRawSqlite(join(dir, 'dedup.sqlite'));
      const completed = new Set(
        (raw.prepare('SELECT key FROM webhook_dedup WHERE completed = 1').all() as { key: string }[]).map(
          (row) => row.key,
        ),
      );
      raw.close();
      for (const answer of report.answers) {
        expect(completed.has(`crm:delivery:${answer.id}`)).toBe(answer.status === 200);
      }
      console.log(
        `${report.runtime} ${report.driver}: ${refused.length} of ${report.answers.length} answered 503, the repeated delivery ran ${report.repeatedRuns} time(s)`,
      );
    },
    60_000,
  );
});
