/** A real redis-server for tests; see servers.ts. */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureServers, freePort, liveDirs, signal, spawnUntil, stopChild } from './server-process.js';

/** A running (or stopped) redis-server. */
export interface RedisServer {
  host: '127.0.0.1';
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** Whether the process is currently running. */
  readonly running: boolean;
  /** Graceful stop (SIGTERM): Redis saves its data and exits; clients see connection errors. */
  stop(): Promise<void>;
  /** Crash (SIGKILL): no save. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the data it saved. */
  start(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open, commands queue unanswered, as in a stall. */
  pause(): void;
  /** Lets a paused process run again (SIGCONT); it then answers everything queued meanwhile. */
  resume(): void;
  /** Its data directory (RDB and AOF files). */
  dir: string;
  /** Stops it and deletes its directory. */
  close(): Promise<void>;
}

/** Options of {@link startRedis}. */
export interface RedisServerOptions {
  /**
   * More redis-server arguments, after the defaults (a later setting wins): `['--appendonly', 'yes']`.
   * The port, bind address and directory stay the test's own.
   */
  args?: readonly string[];
}

/** Starts redis-server on 127.0.0.1 on a free port, in its own temp dir. */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  if (!ensureServers().redis) {
    throw new Error(
      'redis-server is not installed and could not be installed (scripts/ensure-test-servers.sh)',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-redis-'));
  liveDirs.add(dir);
  const port = await freePort();
  let child: ChildProcess | undefined;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '3600 1',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--protected-mode',
    'no',
    '--loglevel',
    'notice',
    ...(options.args ?? []),
    // Last, so a copied command line cannot move the server off its free port or out of its dir.
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
  ];
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    child = await spawnUntil('redis-server', args, /Ready to accept connections/, 'redis-server');
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    stop: () => stopChild(child, 'SIGTERM'),
    kill: () => stopChild(child, 'SIGKILL'),
    start,
    pause: () => signal(child, 'SIGSTOP'),
    resume: () => signal(child, 'SIGCONT'),
    async close() {
      signal(child, 'SIGCONT'); // a stopped process would not act on SIGKILL's exit promptly otherwise
      await stopChild(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}
