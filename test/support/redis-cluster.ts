/**
 * A real Redis Cluster for tests: three masters (no replicas) started from the machine's
 * redis-server with `cluster-enabled yes`, on free ports with free cluster-bus ports, joined and
 * given all 16,384 slots by `redis-cli --cluster create`, ready once every node says `cluster_state:ok`.
 *
 * ```ts
 * const cluster = await startRedisCluster();
 * const client = new Redis.Cluster(cluster.nodes);   // or createCluster({ rootNodes: cluster.urls.map(url => ({ url })) })
 * await cluster.close();
 * ```
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, liveDirs, spawnUntil, stopChild } from './server-process.js';

const run = promisify(execFile);

/** A running three-master Redis Cluster. */
export interface RedisCluster {
  /** The masters, for `new Redis.Cluster(nodes)`. */
  nodes: { host: '127.0.0.1'; port: number }[];
  /** `redis://127.0.0.1:<port>` of each master, for node-redis `createCluster`. */
  urls: string[];
  /** Stops every node and deletes their directories. */
  close(): Promise<void>;
}

/** Starts three cluster-enabled redis-servers and creates the cluster. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-redis-cluster-'));
  liveDirs.add(dir);
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const nodeDir = join(dir, String(i));
      await run('mkdir', ['-p', nodeDir]);
      // A port can still be taken between its check and the node's bind: then new ports, a few times.
      const { child, port } = await withFreshPorts(async () => {
        const port = await freePort();
        // Redis 7's --cluster-port sets the bus port explicitly (default port + 10000 may be taken or > 65535).
        const busPort = await freePort();
        const child = await spawnUntil(
          'redis-server',
          [
            '--port',
            String(port),
            '--cluster-port',
            String(busPort),
            '--bind',
            '127.0.0.1',
            '--dir',
            nodeDir,
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(nodeDir, 'nodes.conf'),
            '--cluster-node-timeout',
            '5000',
            '--save',
            '',
            '--appendonly',
            'no',
            '--daemonize',
            'no',
            '--protected-mode',
            'no',
          ],
          /Ready to accept connections/,
          'redis-server (cluster node)',
        );
        return { child, port };
      });
      ports.push(port);
      children.push(child);
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    // Every node must have learned the whole slot map before clients connect.
    const deadline = Date.now() + 30_000;
    for (const port of ports) {
      for (;;) {
        const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${port} not ok:\n${stdout}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    throw error;
  }
  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    urls: ports.map((port) => `redis://127.0.0.1:${port}`),
    async close() {
      await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}

/** `start()`, again with new ports (up to 5 times) while it fails because a port was taken. */
async function withFreshPorts<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (attempt === 5 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}
