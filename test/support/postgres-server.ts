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

/** Starts PostgreSQL on 127.0.0.1 on a free port with a fresh data dir (fsync off: test data only). */
export async function startPostgres(): Promise<PostgresServer> {
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
  const port = await freePort();
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
  const child: ChildProcess = await spawnUntil(cmd, args, /ready to accept connections/, 'postgres');
  return {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'postgres',
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await stopChild(child, 'SIGINT'); // SIGINT = fast shutdown
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}
