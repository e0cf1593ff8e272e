/** Shared plumbing of servers.ts: finding binaries, free ports, spawning and stopping. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** True when running in CI, where a missing server must fail the run. */
export const inCI = process.env.CI === 'true' || process.env.CI === '1';

let ensured: boolean | undefined;

function which(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, binary))) return join(dir, binary);
  }
  return undefined;
}

/** Directory holding initdb/postgres: PATH, then the newest /usr/lib/postgresql/N/bin, then pg_config. */
export function postgresBinDir(): string | undefined {
  const onPath = which('initdb');
  if (onPath && existsSync(join(onPath, '..', 'postgres'))) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Installs missing servers once per process (as root, via apt-get). Returns what is available. */
export function ensureServers(): { redis: boolean; postgres: boolean } {
  if (ensured === undefined && (!which('redis-server') || !postgresBinDir())) {
    const script = new URL('../../scripts/ensure-test-servers.sh', import.meta.url).pathname;
    try {
      execFileSync('sh', [script], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
    } catch {
      // reported below through the availability flags
    }
    ensured = true;
  }
  return { redis: which('redis-server') !== undefined, postgres: postgresBinDir() !== undefined };
}

/** Whether Redis tests run: yes when installed, and always in CI (where a missing server then fails). */
export const redisAvailable = (): boolean => ensureServers().redis || inCI;
/** Whether Postgres tests run: yes when installed, and always in CI (where a missing server then fails). */
export const postgresAvailable = (): boolean => ensureServers().postgres || inCI;

/**
 * A free TCP port on 127.0.0.1 for a server a test starts, released just before that server binds it.
 * Drawn below the kernel's ephemeral range (32768–60999 on Linux): a port the OS picks for `listen(0)`
 * is also what it hands the next outgoing connection, and with many tests connecting at once one took
 * a cluster node's port in that gap. Checked by binding it; the OS's pick if none of 50 draws is free.
 */
export async function freePort(): Promise<number> {
  for (let draw = 0; draw < 50; draw++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await bindable(port)) return port;
  }
  return listenedPort(0);
}

function bindable(port: number): Promise<boolean> {
  return listenedPort(port).then(
    () => true,
    () => false,
  );
}

function listenedPort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** Spawns a server and resolves once `ready` appears in its output. */
export function spawnUntil(
  command: string,
  args: string[],
  ready: RegExp,
  name: string,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${name} not ready within 30 s`)), 30_000);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${output.slice(-2000)}`));
    }
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stderr?.removeAllListeners('data');
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(child);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`${name} exited early with code ${code}`)));
  });
}

export function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.removeAllListeners('exit');
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/** Sends `name` to a running child (SIGSTOP/SIGCONT to freeze and thaw it); a no-op once it exited. */
export function signal(child: ChildProcess | undefined, name: NodeJS.Signals): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill(name);
}

/** Child pids of `pid`, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return children;
}

/**
 * Sends `name` to a child and all its descendants: a server's worker processes (PostgreSQL backends
 * call setsid, so a process-group signal would miss them). The parent first, so it forks no more.
 */
export function signalTree(child: ChildProcess | undefined, name: NodeJS.Signals): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const pending = [child.pid];
  for (let pid = pending.shift(); pid !== undefined; pid = pending.shift()) {
    try {
      process.kill(pid, name);
    } catch {
      continue; // gone already
    }
    pending.push(...childrenOf(pid));
  }
}

/** Temp dirs to delete at exit, in case a test forgot to close its server. */
export const liveDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});
