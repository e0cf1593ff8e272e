/**
 * A real DynamoDB-compatible server for tests: `dynalite` in its own Node process on 127.0.0.1
 * (port 0 at first, then the same port on a restart), backed by LevelDB in a temp directory so a
 * restart keeps its tables and items. Freeze it with pause() (SIGSTOP: connections stay open,
 * requests wait unanswered), crash it with kill() (SIGKILL), start it again with start().
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { liveDirs, signal, stopChild } from './server-process.js';

const dynalitePath = createRequire(import.meta.url).resolve('dynalite');

// Listens on the port given (0: any free one) and prints it; tables are ACTIVE at once.
const LAUNCHER = `
const dynalite = require(process.argv[1]);
const server = dynalite({ path: process.argv[2], createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
server.listen(Number(process.argv[3]), '127.0.0.1', () => console.log('dynalite on ' + server.address().port));
`;

/** A running (or stopped) dynalite. */
export interface DynaliteServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Freezes the process (SIGSTOP): requests are accepted by the kernel and wait unanswered. */
  pause(): void;
  /** Lets a paused process run again (SIGCONT); it answers what waited. */
  resume(): void;
  /** Crash (SIGKILL); what it acknowledged is on disk (LevelDB). */
  kill(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** A client for it: fake credentials, the SDK's default retries. */
  client(): DynamoDBClient;
  /** Stops it and deletes its data. */
  close(): Promise<void>;
}

/** Spawns the launcher; resolves with the process and the port it listens on. */
function spawnDynalite(dir: string, port: number): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', LAUNCHER, dynalitePath, join(dir, 'db'), String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => fail(new Error('dynalite not ready within 30 s')), 30_000);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${output.slice(-2000)}`));
    }
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /dynalite on (\d+)/.exec(output);
      if (!listening) return;
      clearTimeout(timer);
      child.stdout?.removeAllListeners('data');
      child.stderr?.removeAllListeners('data');
      child.stdout?.resume();
      child.stderr?.resume();
      child.removeAllListeners('exit');
      resolve({ child, port: Number(listening[1]) });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`dynalite exited early with code ${code}`)));
  });
}

/** Starts dynalite on 127.0.0.1, port 0, with its data in a new temp directory. */
export async function startDynalite(): Promise<DynaliteServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-dynalite-'));
  liveDirs.add(dir);
  let child: ChildProcess | undefined;
  let port = 0;
  const clients: DynamoDBClient[] = [];
  async function start(): Promise<void> {
    ({ child, port } = await spawnDynalite(dir, port));
  }
  await start();
  return {
    get endpoint() {
      return `http://127.0.0.1:${port}`;
    },
    pause: () => signal(child, 'SIGSTOP'),
    resume: () => signal(child, 'SIGCONT'),
    kill: () => stopChild(child, 'SIGKILL'),
    start,
    client() {
      const client = new DynamoDBClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) client.destroy();
      signal(child, 'SIGCONT');
      await stopChild(child, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}

/**
 * Creates `table` as docs/dedup-dynamodb.md defines it (partition key `key`, a string; on-demand capacity)
 * and waits until it is ACTIVE.
 */
export async function createDedupTable(client: DynamoDBClient, table: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: table,
      AttributeDefinitions: [{ AttributeName: 'key', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'key', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await waitActive(client, table);
}

/** Resolves once `table` is ACTIVE. */
export async function waitActive(client: DynamoDBClient, table: string): Promise<void> {
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: table }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
