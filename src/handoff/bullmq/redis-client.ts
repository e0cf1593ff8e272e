/**
 * The Redis client behind a BullMQ queue or worker, as far as the hand-off needs it: whether its
 * connection is up, `WAIT` for replicas after a write, and the `maxmemory-policy` it runs with.
 * BullMQ wraps the client it was given; ioredis's own members are reached through that wrapper and
 * read structurally, so a client of another driver simply skips these checks.
 */

/** The members of an ioredis `Redis` or `Cluster` read here. */
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

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The Redis Cluster hash slot of `key` (its `{hash tag}` when it has a non-empty one). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(new TextEncoder().encode(hashed)) % 16_384;
}

/**
 * The connection `WAIT` must go to: WAIT counts the replicas that acknowledged *this connection's*
 * last write, so on a Cluster it is the master connection that ran the write (the one serving `key`).
 */
function connectionOf(client: RawRedisClient, key: string): RawRedisClient {
  if (client.isCluster !== true) return client;
  const slots = client.slots as (readonly string[] | undefined)[] | undefined;
  const nodeKey = slots?.[keySlot(key)]?.[0];
  const master = client
    .nodes?.('master')
    .find(({ options }) => `${String(options?.host)}:${String(options?.port)}` === nodeKey);
  if (!master) throw new Error(`no Redis Cluster master known for the slot of ${key}`);
  return master;
}

/** Runs `WAIT replicas timeoutMs` after the write of `key`; resolves how many replicas acknowledged it. */
export async function waitForReplicas(
  client: RawRedisClient,
  key: string,
  replicas: number,
  timeoutMs: number,
): Promise<number> {
  const connection = connectionOf(client, key);
  if (typeof connection.wait !== 'function') throw new Error('the Redis client has no WAIT command');
  return Number(await connection.wait(replicas, timeoutMs));
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
