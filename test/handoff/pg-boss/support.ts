/**
 * Shared setup of the pg-boss hand-off tests: a real PostgreSQL (test/support/servers.ts), a PgBoss
 * per test on its own schema, a receiver behind a real node:http server on 127.0.0.1, and worker
 * processes (fixtures/worker-process.ts) for the tests where a crash is the point.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { WebhookReceiverLike } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Delivery } from '../../receivers/support.js';
import { type PostgresServer, startPostgres } from '../../support/servers.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/worker-process.ts', import.meta.url));

/** A suite's PostgreSQL, pool and per-test cleanup, set up by {@link usePostgres}. */
export interface PostgresSuite {
  readonly postgres: PostgresServer;
  readonly pool: pg.Pool;
  /** Run after each test, last registered first. */
  readonly cleanup: (() => Promise<unknown>)[];
}

/** Registers the hooks of a suite on a real PostgreSQL: started once, a pool, cleanup after each test. */
export function usePostgres(): PostgresSuite {
  const suite = { cleanup: [] } as unknown as {
    postgres: PostgresServer;
    pool: pg.Pool;
    cleanup: (() => Promise<unknown>)[];
  };
  beforeAll(async () => {
    suite.postgres = await startPostgres();
    suite.pool = new pg.Pool({ connectionString: suite.postgres.connectionString, max: 10 });
    suite.pool.on('error', () => {});
  });
  afterEach(async () => {
    for (const step of suite.cleanup.splice(0).reverse()) await step().catch(() => {});
  });
  afterAll(async () => {
    await suite.pool?.end();
    await suite.postgres?.close();
  });
  return suite;
}

let sequence = 0;
/** A name unique to this test process (schemas, queues, dedup tables). */
export const unique = (prefix: string) =>
  `${prefix}_${process.pid}_${++sequence}_${Math.random().toString(36).slice(2, 6)}`;

/**
 * Durable commits on the test server, which runs with `synchronous_commit=off` (test/support): an
 * immediate shutdown would otherwise forget the last commits, as no production server does.
 */
export const DURABLE = '-c synchronous_commit=on';

/**
 * A started PgBoss on its own schema. Fast supervision (1 s) so expired jobs of a killed worker are
 * retried within the test; every error event is collected instead of ending the process.
 */
export async function startBoss(
  connectionString: string,
  schema: string,
): Promise<PgBoss & { errors: Error[] }> {
  const boss = new PgBoss({
    connectionString,
    schema,
    options: DURABLE,
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    max: 10,
  }) as PgBoss & { errors: Error[] };
  boss.errors = [];
  boss.on('error', (error) => boss.errors.push(error));
  await boss.start();
  return boss;
}

/** A receiver on a real HTTP server at 127.0.0.1 (port 0). */
export async function serve(
  receiver: WebhookReceiverLike,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One attempt of `delivery` over HTTP: its status (0 when nothing answered) and body. */
export async function post(url: string, delivery: Delivery): Promise<{ status: number; body: string }> {
  try {
    const response = await fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

/** Polls `condition` every 50 ms until it holds or `timeoutMs` passes; returns whether it held. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await condition()) return true;
    await sleep(50);
  }
  return condition();
}

/** Environment of a worker process; see fixtures/worker-process.ts. */
export interface WorkerEnv {
  DATABASE_URL: string;
  SCHEMA: string;
  QUEUE: string;
  DEDUP_TABLE: string;
  CRM_SECRET: string;
  /** Handler time, ms. */
  HANDLER_MS?: string;
  CONCURRENCY?: string;
  LEASE_MS?: string;
  EXPIRE_SECONDS?: string;
  SHUTDOWN_MS?: string;
  /** A secret per tenant: JSON `{ tenant: secret }`; with HANDOFF_SECRETS (comma-separated). */
  TENANT_SECRETS?: string;
  HANDOFF_SECRETS?: string;
  /** A table `(delivery_id PRIMARY KEY, tenant, route_tenant)` each handler writes its row to. */
  BUSINESS_TABLE?: string;
}

/** A worker process and what it printed: `start <id>` and `done <id>` per handler run. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Ids of handler runs started / finished, in order, duplicates included. */
  started: string[];
  done: string[];
  /** Ids whose handler is running now. */
  running: Set<string>;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns a worker process and resolves once it is fetching jobs (`ready`). */
export async function spawnWorker(env: WorkerEnv): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started: string[] = [];
  const done: string[] = [];
  const running = new Set<string>();
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (errors.length < 8_000) errors += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [word, id = ''] = line.split(' ');
        if (word === 'ready') resolve();
        else if (word === 'start') {
          started.push(id);
          running.add(id);
        } else if (word === 'done') {
          done.push(id);
          running.delete(id);
        }
      }
    });
    void exited.then(({ code, signal }) => reject(new Error(`worker exited (${code ?? signal}): ${errors}`)));
    setTimeout(() => reject(new Error(`worker not ready within 30 s: ${errors}`)), 30_000).unref();
  });
  return { child, started, done, running, stderr: () => errors, exited };
}
