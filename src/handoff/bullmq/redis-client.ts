/**
 * The Redis client behind a BullMQ queue or worker, as far as the hand-off needs it: whether its
 * connection is up, `WAIT` for replicas after a write, and the `maxmemory-policy` it runs with.
 * BullMQ wraps the client it was given; ioredis's own members are reached through that wrapper and
 * read structurally, so a client of another driver simply skips these checks.
 */

/** The members of an ioredis `Redis` or `Cluster` read here. */
export { waitForReplicas } from '../../dedup/redis-client.js';

export interface RawRedisClient {
  status?: unknown;
  isCluster?: unknown;
  options?: { host?: unknown; port?: unknown };
  wait?(replicas: number, timeoutMs: number): Promise<unknown>;
  config?(operation: 'GET', parameter: string): Promise<unknown>;
  /** ioredis `Cluster`: its master connections, and the node keys (`host:port`) serving each slot. */
  nodes?(role: 'master'): RawRedisClient[];
  slots?: unknown;
}

/** A BullMQ 6 `Queue`/`Worker` (`getBackend().client`), or an older one (`client`). */
interface ClientHolder {
  getBackend?(): { client?: unknown } | undefined;
  client?: unknown;
}

/** The promise of the Redis client of a BullMQ queue or worker, when it exposes one. */
export function redisClientOf(holder: unknown): Promise<RawRedisClient> | undefined {
  const { getBackend, client } = holder as ClientHolder;
  const promise = typeof getBackend === 'function' ? getBackend.call(holder)?.client : client;
  if (typeof (promise as Promise<unknown> | undefined)?.then !== 'function') return undefined;
  return promise as Promise<RawRedisClient>;
}

/**
 * Whether commands sent now reach Redis at once. ioredis queues commands while it is not `ready`
 * (offline queue) and sends them when it reconnects; a Cluster reports `connect` once usable.
 */
export function connectionStatus(client: RawRedisClient): { ready: boolean; status: string } {
  const { status } = client;
  if (typeof status !== 'string') return { ready: true, status: 'unknown' };
  return { ready: status === 'ready' || (client.isCluster === true && status === 'connect'), status };
}

/**
 * The server's `maxmemory-policy`, or undefined when it cannot be read: managed Redis services often
 * refuse `CONFIG` (then nothing is said rather than a failure).
 */
export async function evictionPolicy(client: RawRedisClient): Promise<string | undefined> {
  if (typeof client.config !== 'function') return undefined;
  try {
    const reply = await client.config('GET', 'maxmemory-policy');
    return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined;
  } catch {
    return undefined;
  }
}
