/**
 * The Redis settings docs/handoff-bullmq.md "Redis requirements" documents, checked on real redis-servers:
 * started with the documented command line (the example's README uses the same one), SIGKILLed right
 * after the last 200 of a few hundred acknowledged deliveries and restarted on its data directory,
 * Redis still has every acknowledged job; a worker reports an evicting `maxmemory-policy` through
 * `onError` and says nothing when `CONFIG` is refused; `waitForReplicas` answers 503 when no replica
 * acknowledged the job.
 */
import { readFileSync } from 'node:fs';
import { createMailReceiver, type ErrorInfo } from '@svc/webhooks';
import { type BullmqHandoffOptions, createBullmqHandoff, createBullmqWorker } from '@svc/webhooks/bullmq';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { bullmqJobId } from '../../src/handoff/bullmq/job-id.js';
import { deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/servers.js';

/** The `redis-server …` line of the first ```sh block in `file` that has one. */
function redisCommandLine(file: string): string {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const line = block[1]?.split('\n').find((candidate) => candidate.trim().startsWith('redis-server '));
    if (line) return line.trim();
  }
  throw new Error(`no redis-server command line in a sh block of ${file}`);
}

/** The arguments of a `redis-server` command line (no quoting in the documented ones). */
const argsOf = (line: string): string[] => line.split(/\s+/).slice(1);

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

async function redisWith(args: readonly string[]): Promise<RedisServer> {
  const redis = await startRedis({ args });
  cleanup.push(() => redis.close());
  return redis;
}

function client(redis: RedisServer, options: { username?: string; password?: string } = {}): Redis {
  const connection = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null, ...options });
  connection.on('error', () => undefined); // the server is killed on purpose
  cleanup.push(async () => connection.disconnect());
  return connection;
}

function mailHandoff(queue: Queue, extra: Partial<BullmqHandoffOptions> = {}) {
  return createMailReceiver({
    secret: MAIL_SECRET,
    timeoutMs: 2_000,
    leaseMs: 3_000,
    logger: () => undefined,
    handoff: createBullmqHandoff({ queue, ...extra }),
  });
}

describe.runIf(redisAvailable())('BullMQ hand-off: the Redis requirements', () => {
  const documented = redisCommandLine('docs/handoff-bullmq.md');

  it('docs/handoff-bullmq.md and the example README start Redis with the same durable command line', () => {
    expect(redisCommandLine('examples/handoff-bullmq/README.md')).toBe(documented);
    expect(argsOf(documented)).toEqual(
      expect.arrayContaining(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']),
    );
  });

  it.each([
    ['as documented', documented],
    ['with the documented alternative appendfsync everysec', documented.replace(/always/, 'everysec')],
  ])(
    'a Redis started %s and SIGKILLed right after the last 200 keeps every acknowledged job',
    async (_, line) => {
      const redis = await redisWith(argsOf(line));
      const connection = client(redis);
      const queueName = `durable-${process.pid}`;
      const queue = new Queue(queueName, { connection });
      queue.on('error', () => undefined);
      cleanup.push(() => queue.close());
      const receiver = mailHandoff(queue);
      const deliveries = Array.from({ length: 300 }, () => mailDelivery('delivered'));
      const statuses: number[] = [];
      for (let i = 0; i < deliveries.length; i += 50) {
        const answers = await Promise.all(deliveries.slice(i, i + 50).map((d) => deliver(receiver, d)));
        statuses.push(...answers.map((answer) => answer.status));
      }
      await redis.kill(); // SIGKILL at once after the last 200: no shutdown save
      expect(statuses.filter((status) => status === 200)).toHaveLength(300);
      await redis.start(); // same port, same data directory
      const reader = client(redis);
      const exists = await Promise.all(
        deliveries.map((d) =>
          reader.exists(`bull:${queueName}:${bullmqJobId(`mail:delivery:${d.deliveryId}`)}`),
        ),
      );
      const lost = deliveries.filter((_, i) => exists[i] !== 1).length;
      expect(lost).toBe(0);
    },
  );

  it('a worker reports an evicting maxmemory-policy through onError, and says nothing when CONFIG is refused', async () => {
    const redis = await redisWith(['--maxmemory-policy', 'allkeys-lru']);
    const admin = client(redis);
    await admin.acl(
      'SETUSER',
      'worker',
      'on',
      '>worker-password-of-real-length',
      '~*',
      '&*',
      '+@all',
      '-config',
    );
    const reports = (receiver: ReturnType<typeof createMailReceiver>) => {
      const seen: string[] = [];
      receiver.onError((error, info: ErrorInfo<unknown>) => {
        if (info.phase === 'job') seen.push(String((error as Error).message));
      });
      return seen;
    };
    const startWorker = (connection: Redis, queueName: string) => {
      const receiver = createMailReceiver({
        secret: MAIL_SECRET,
        timeoutMs: 2_000,
        leaseMs: 3_000,
        logger: () => undefined,
      });
      const seen = reports(receiver);
      const { close } = createBullmqWorker(receiver, { queueName, connection, shutdownSignals: [] });
      cleanup.push(close);
      return seen;
    };
    const refused = startWorker(
      client(redis, { username: 'worker', password: 'worker-password-of-real-length' }),
      'q-refused',
    );
    const allowed = startWorker(client(redis), 'q-allowed');
    const until = async (check: () => Promise<boolean> | boolean) => {
      for (let i = 0; i < 400 && !(await check()); i++)
        await new Promise((resolve) => setTimeout(resolve, 25));
    };
    await until(() => allowed.length > 0);
    expect(allowed).toEqual([expect.stringContaining('maxmemory-policy allkeys-lru')]);
    // The refused worker asked too (Redis logged the denied CONFIG), and reported nothing.
    await until(async () => JSON.stringify(await admin.acl('LOG')).includes('config'));
    expect(JSON.stringify(await admin.acl('LOG'))).toContain('worker');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(refused).toEqual([]);
  });

  it('waitForReplicas: 200 once a replica acknowledged the job, 503 handoff_unavailable when none did', async () => {
    const primary = await redisWith(argsOf(documented));
    const replica = await redisWith([
      ...argsOf(documented),
      '--replicaof',
      '127.0.0.1',
      String(primary.port),
    ]);
    const replicaClient = client(replica);
    for (let i = 0; i < 400; i++) {
      if (String(await replicaClient.info('replication')).includes('master_link_status:up')) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const connection = client(primary);
    const queueName = `replicated-${process.pid}`;
    const queue = new Queue(queueName, { connection });
    queue.on('error', () => undefined);
    cleanup.push(() => queue.close());
    const receiver = mailHandoff(queue, { waitForReplicas: { replicas: 1, waitMs: 300 } });
    const first = mailDelivery('delivered');
    expect((await deliver(receiver, first)).status).toBe(200);
    // Acknowledged only once the replica had it.
    const jobKey = `bull:${queueName}:${bullmqJobId(`mail:delivery:${first.deliveryId}`)}`;
    expect(await replicaClient.exists(jobKey)).toBe(1);
    await replica.kill();
    const second = await deliver(receiver, mailDelivery('delivered'));
    expect([second.status, second.code]).toEqual([503, 'handoff_unavailable']);
  });
});
