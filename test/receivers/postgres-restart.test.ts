/**
 * Postgres restarting (immediate shutdown: clients' connections are cut) under a receiver that runs
 * in its own process, set up as docs/dedup.md shows. The process must stay up (a pg Pool emits
 * 'error' for its idle connections, fatal without a listener), answer 503 while Postgres is down,
 * and handle the CRM's retries once it is back: every delivery's handler runs exactly once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/servers.js';
import { deliverOnCrmSchedule } from './crm-schedule.js';
import { CRM_SECRET, crmDelivery } from './support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./fixtures/pg-receiver-server.ts', import.meta.url));

interface ReceiverProcess {
  child: ChildProcess;
  url: string;
  /** Handler runs per delivery id, from the process's stdout. */
  runs: Map<string, number>;
  stderr(): string;
}

async function startReceiver(databaseUrl: string, poolErrorListener: boolean): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      CRM_SECRET,
      POOL_ERROR_LISTENER: poolErrorListener ? '1' : '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const runs = new Map<string, number>();
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (errors.length < 4_000) errors += chunk.toString(); // the head: where a crash names its cause
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const [word, value = ''] = line.split(' ');
        if (word === 'listening') resolve(Number(value));
        if (word === 'handled') runs.set(value, (runs.get(value) ?? 0) + 1);
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`receiver exited (${code ?? signal}): ${errors}`)));
    setTimeout(() => reject(new Error(`receiver not listening within 30 s: ${errors}`)), 30_000).unref();
  });
  return { child, url: `http://127.0.0.1:${port}/`, runs, stderr: () => errors };
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

describe.runIf(postgresAvailable())('Postgres restart under a receiver process', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(async () => {
    await postgres?.close();
  });

  const setups: [string, boolean][] = [
    ['the pool setup docs/dedup.md shows (pool error listener)', true],
    ['a pool with no error listener (the store listens itself)', false],
  ];
  for (const [name, listener] of setups) {
    it(`stays up, answers 503 while Postgres is down, then handles the retries once: ${name}`, async () => {
      const receiver = await startReceiver(postgres.connectionString, listener);
      try {
        // Deliveries keep arriving (one every 150 ms, each on the CRM schedule) across the restart,
        // so the pool holds idle and busy connections when Postgres goes away.
        const deliveries = Array.from({ length: 16 }, () => crmDelivery('deal.won'));
        const flows = deliveries.map(async (delivery, i) => {
          await sleep(i * 150);
          return deliverOnCrmSchedule(receiver.url, delivery);
        });
        await sleep(1_000);
        await postgres.stop(); // immediate shutdown
        const whileDown = await deliverOnce(receiver.url);
        await sleep(500);
        await postgres.start();
        const statuses = await Promise.all(flows);

        expect(alive(receiver.child), receiver.stderr()).toBe(true);
        expect(whileDown).toBe(503);
        expect(statuses.flat()).toContain(503); // some CRM attempts met the outage too
        for (const attempts of statuses) expect(attempts.at(-1)).toBe(200);
        expect(deliveries.map((d) => receiver.runs.get(d.deliveryId) ?? 0)).toEqual(deliveries.map(() => 1));
      } finally {
        receiver.child.kill('SIGKILL');
        if (!postgres.running) await postgres.start();
      }
    }, 60_000);
  }
});

/** One attempt of a fresh delivery; its status, 0 when nothing answered (the process is gone). */
async function deliverOnce(url: string): Promise<number> {
  const delivery = crmDelivery('deal.won');
  try {
    const response = await fetch(url, { method: 'POST', body: delivery.body, headers: delivery.headers });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
