/**
 * The demo's hand-off chapter: an email receiver in hand-off mode on BullMQ, with a redis-server the
 * demo starts itself on 127.0.0.1 (the machine's binary) with the settings docs/handoff.md requires
 * (append-only file, no eviction) in a temporary directory it removes afterwards, and a BullMQ worker in
 * the same process running the handlers. Redis rather than PostgreSQL because it starts in milliseconds
 * with no setup. Without a `redis-server` binary the chapter is skipped, never the demo.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailReceiver, type ReceiverOptions } from '@svc/webhooks';
import { createBullmqHandoff, createBullmqWorker } from '@svc/webhooks/bullmq';
import { createNodeListener } from '@svc/webhooks/node';
import { createRedisStore } from '@svc/webhooks/redis';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

export interface HandoffDemoReceiver {
  url: string;
  /** While true, every handler run throws (the worker's job fails; BullMQ retries it). */
  outage: boolean;
  /** Handler runs that threw so far. */
  readonly failedRuns: number;
  close(): Promise<void>;
}

function redisServerBinary(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** docs/handoff-bullmq.md "Redis requirements": what Redis acknowledged survives its crash, and is never evicted. */
const DURABLE = ['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction'];

async function startRedisServer(binary: string): Promise<{ port: number; child: ChildProcess; dir: string }> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-demo-redis-'));
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...DURABLE],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output.slice(-500)}`)));
  });
  return { port, child, dir };
}

/** Starts the hand-off receiver, or resolves why it cannot (no redis-server on this machine). */
export async function startHandoffDemoReceiver(options: {
  mailSecret: string;
  /** Awaited by the handler: the handler's own work. */
  onHandled(name: string, deliveryId: string, attempt: number | undefined): void | Promise<void>;
  /** Chapter 9: the receiver's (and the worker's) OpenTelemetry. */
  telemetry?: ReceiverOptions['telemetry'];
}): Promise<HandoffDemoReceiver | { skipped: string }> {
  const binary = redisServerBinary();
  if (!binary)
    return { skipped: 'no redis-server binary on this machine (scripts/ensure-test-servers.sh installs it)' };
  const redis = await startRedisServer(binary);
  const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const queue = new Queue('demo-mail', { connection });
  // Short backoff so the demo stays fast; the default starts at 1 s (docs/handoff.md).
  const handoff = createBullmqHandoff({ queue, backoffMs: 100, attempts: 30 });
  const state = { outage: false, failedRuns: 0 };
  const receiver = createMailReceiver({
    secret: options.mailSecret,
    dedup: createRedisStore({ client: connection, prefix: 'demo:dedup:' }),
    handoff,
    logger: false,
    telemetry: options.telemetry,
  }).onAny(async (event, { attempt }) => {
    if (state.outage) {
      state.failedRuns++;
      throw new Error('database unavailable');
    }
    await options.onHandled(event.name, event.deliveryId, attempt);
  });
  const worker = createBullmqWorker(receiver, {
    queueName: 'demo-mail',
    connection,
    concurrency: 4,
    shutdownSignals: [],
  });
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get outage() {
      return state.outage;
    },
    set outage(value: boolean) {
      state.outage = value;
    },
    get failedRuns() {
      return state.failedRuns;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await worker.close();
      await queue.close();
      connection.disconnect();
      redis.child.kill('SIGKILL');
      await new Promise((resolve) => redis.child.once('exit', resolve));
      rmSync(redis.dir, { recursive: true, force: true });
    },
  };
}
