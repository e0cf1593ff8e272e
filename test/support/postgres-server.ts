/** A real PostgreSQL server for tests; see servers.ts. */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensureServers,
  freePort,
  liveDirs,
  postgresBinDir,
  signalTree,
  spawnUntil,
  stopChild,
} from './server-process.js';

/** A running PostgreSQL server (user `postgres`, trust auth, database `postgres`). */
export interface PostgresServer {
  host: '127.0.0.1';
  port: number;
  user: 'postgres';
  database: 'postgres';
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  connectionString: string;
  /** Whether the server is currently running (paused counts as running). */
  readonly running: boolean;
  /**
   * Freezes the server and all its backends (SIGSTOP to each process): connections stay open and
   * queries wait unanswered, as in a stall.
   */
  pause(): void;
  /** Lets a paused server run again (SIGCONT); queries that waited are then executed. */
  resume(): void;
  /** Immediate shutdown (SIGQUIT: no checkpoint; clients see their connections terminated). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory (crash recovery after an immediate stop). */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
  /** Stops it (fast shutdown) and deletes its data directory. */
  close(): Promise<void>;
}

// PostgreSQL refuses to run as root: as root, run initdb and postgres as `nobody` via setpriv.
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

function command(binary: string, args: string[]): [string, string[]] {
  if (!asRoot) return [binary, args];
  return ['setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', binary, ...args]];
}

function own(path: string): void {
  if (asRoot) chownSync(path, NOBODY, NOBODY);
}

// initdb takes seconds; do it once per machine into a template dir and copy that for each server.
function templateDir(bin: string): string {
  const version = execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).replace(
    /\D+/g,
    '-',
  );
  const template = join(
    tmpdir(),
    `svc-webhooks-pg-template${version}${asRoot ? 'root' : process.getuid?.()}`,
  );
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  const staging = mkdtempSync(join(tmpdir(), 'svc-webhooks-pg-initdb-'));
  own(staging);
  const data = join(staging, 'data');
  const [cmd, args] = command(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--no-locale',
    '--no-sync',
  ]);
  execFileSync(cmd, args, { stdio: 'ignore', timeout: 120_000 });
  try {
    renameSync(data, template); // atomic: concurrent workers race here, one wins
  } catch {
    // another worker created it first
  }
  rmSync(staging, { recursive: true, force: true });
  return template;
}

/**
 * Starts PostgreSQL on 127.0.0.1 on a free port (or `port`: the shell-block runner gives the documented
 * 5432 in its private network namespace) with a fresh data dir (fsync off: test data only).
 */
export async function startPostgres(options: { port?: number } = {}): Promise<PostgresServer> {
  const bin = ensureServers().postgres ? postgresBinDir() : undefined;
  if (!bin) throw new Error('PostgreSQL binaries not found (PATH, /usr/lib/postgresql/*/bin, pg_config)');
  const template = templateDir(bin);
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-pg-'));
  liveDirs.add(dir);
  own(dir);
  const data = join(dir, 'data');
  cpSync(template, data, { recursive: true, preserveTimestamps: true });
  if (asRoot) execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, data]);
  if ((statSync(data).mode & 0o077) !== 0) execFileSync('chmod', ['700', data]);
  const port = options.port ?? (await freePort());
  const [cmd, args] = command(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
  ]);
  let child: ChildProcess | undefined;
  const isRunning = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    if (isRunning()) return;
    child = await spawnUntil(cmd, args, /ready to accept connections/, 'postgres');
  };
  const stop = async () => {
    signalTree(child, 'SIGCONT');
    await stopChild(child, 'SIGQUIT'); // SIGQUIT = immediate shutdown
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    get running() {
      return isRunning();
    },
    pause: () => signalTree(child, 'SIGSTOP'),
    resume: () => signalTree(child, 'SIGCONT'),
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    async close() {
      signalTree(child, 'SIGCONT');
      await stopChild(child, 'SIGINT'); // SIGINT = fast shutdown
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}
