/**
 * Shared setup of the NATS JetStream hand-off tests: Debian's nats-server with JetStream on a free
 * port of 127.0.0.1 and a temporary store directory (restartable on the same port and data), the
 * work and dead-letter streams, and a connection.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll } from 'vitest';
import { freePort, inCI, spawnUntil, stopChild } from '../../support/server-process.js';

function installed(): boolean {
  const found = () =>
    (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, 'nats-server')));
  if (found()) return true;
  try {
    const script = new URL('../../../scripts/ensure-test-servers.sh', import.meta.url).pathname;
    execFileSync('sh', [script], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
  } catch {
    // reported by the flag
  }
  return found();
}

/** Whether the NATS tests run: yes when nats-server is installed, and always in CI. */
export const natsAvailable = (): boolean => installed() || inCI;

/** A running nats-server with JetStream. */
export interface NatsServer {
  readonly url: string;
  child: ChildProcess;
  /** Starts it again on the same port and store directory (after a kill). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts nats-server -js on a free port with a store directory of its own. */
export async function startNats(): Promise<NatsServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nats-'));
  const start = () =>
    spawnUntil(
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir],
      /Server is ready/,
      'nats-server',
    );
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    child: await start(),
    async restart() {
      server.child = await start();
    },
    async close() {
      await stopChild(server.child, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A connection that keeps reconnecting (the engine-fault tests stop the server). */
export const connectNats = (url: string): Promise<NatsConnection> =>
  connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

/**
 * Creates the work and dead-letter streams as docs/handoff.md says (names unique per test): a
 * 5-minute duplicate window unless told.
 */
export async function createStreams(
  nc: NatsConnection,
  names: { stream: string; deadLetterStream: string; prefix: string },
  duplicateWindowMs = 300_000,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: names.stream,
    subjects: [`${names.prefix}.>`],
    duplicate_window: duplicateWindowMs * 1_000_000,
  });
  await jsm.streams.add({ name: names.deadLetterStream, subjects: [`${names.prefix}-dead.>`] });
}

let sequence = 0;
/** Stream names and a subject prefix unique to this test process. */
export function uniqueNames(): { stream: string; deadLetterStream: string; prefix: string } {
  const n = `${process.pid}_${++sequence}`;
  return { stream: `WEBHOOKS_${n}`, deadLetterStream: `WEBHOOKS_DEAD_${n}`, prefix: `webhooks${n}` };
}

/** A nats-server and a connection to it for the suite it is called in: started before its tests, closed after. */
export function natsForSuite(): { readonly server: NatsServer; readonly nc: NatsConnection } {
  const suite = {} as { server: NatsServer; nc: NatsConnection };
  beforeAll(async () => {
    suite.server = await startNats();
    suite.nc = await connectNats(suite.server.url);
  });
  afterAll(async () => {
    await suite.nc?.close();
    await suite.server?.close();
  });
  return suite;
}
