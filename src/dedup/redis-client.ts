/**
 * The structural shape of the two Redis clients we support, so neither is imported (both are optional
 * peers), and a script runner that needs one round trip: `EVALSHA`, falling back to `EVAL` only when
 * the server does not know the script yet (`NOSCRIPT`, after a restart or `SCRIPT FLUSH`).
 */

/**
 * An `ioredis` client or cluster (`new Redis()`, `new Redis.Cluster()`): lower-case variadic commands.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const client: IoRedisLike = new Redis(process.env.REDIS_URL!);
 * ```
 *
 * @example
 * ```ts
 * import type { IoRedisLike } from '@svc/webhooks/redis';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: IoRedisLike): IoRedisLike {
 *   return value;
 * }
 * ```
 */
export interface IoRedisLike {
  evalsha(sha1: string, numkeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numkeys: number, ...args: string[]): Promise<unknown>;
}

/**
 * A node-redis v4+ client or cluster (`createClient()`, `createCluster()`), already connected.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * const client: NodeRedisLike = await createClient({ url: process.env.REDIS_URL }).connect();
 * ```
 *
 * @example
 * ```ts
 * import type { NodeRedisLike } from '@svc/webhooks/redis';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: NodeRedisLike): NodeRedisLike {
 *   return value;
 * }
 * ```
 */
export interface NodeRedisLike {
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/**
 * Either supported Redis client.
 *
 * @example
 * ```ts
 * function makeStore(client: RedisClientLike) {
 *   return createRedisStore({ client });
 * }
 * ```
 *
 * @example
 * ```ts
 * import type { RedisClientLike } from '@svc/webhooks/redis';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: RedisClientLike): RedisClientLike {
 *   return value;
 * }
 * ```
 */
export type RedisClientLike = IoRedisLike | NodeRedisLike;

/** A Lua script with its SHA-1, computed once with Web Crypto. */
export interface Script {
  source: string;
  sha1: Promise<string>;
  /** The SHA-1 once computed: then a call is sent without waiting a tick (see evalScript). */
  readonly known: string | undefined;
}

/** Prepares `source` for {@link evalScript}. */
export function defineScript(source: string): Script {
  let sha1: Promise<string> | undefined;
  let known: string | undefined;
  return {
    source,
    get sha1() {
      sha1 ??= globalThis.crypto.subtle.digest('SHA-1', new TextEncoder().encode(source)).then((digest) => {
        known = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
        return known;
      });
      return sha1;
    },
    get known() {
      return known;
    },
  };
}

function isNodeRedis(client: RedisClientLike): client is NodeRedisLike {
  return typeof (client as Partial<NodeRedisLike>).evalSha === 'function';
}

/** True for a client value the store can drive. */
export function isRedisClient(client: unknown): client is RedisClientLike {
  if (typeof client !== 'object' || client === null) return false;
  const c = client as Record<string, unknown>;
  return typeof c.eval === 'function' && (typeof c.evalSha === 'function' || typeof c.evalsha === 'function');
}

function isNoScript(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.startsWith('NOSCRIPT');
}

/**
 * Runs `script` on one key: one round trip when the script is cached on the server (the common case).
 * Once the SHA-1 is known the command is handed to the client synchronously, within the caller's
 * tick: a command sent right after another on the same connection is then queued behind it (a claim's
 * abandon behind the claim).
 */
export async function evalScript(
  client: RedisClientLike,
  script: Script,
  key: string,
  args: string[],
): Promise<unknown> {
  const sha1 = script.known ?? (await script.sha1);
  if (isNodeRedis(client)) {
    const options = { keys: [key], arguments: args };
    try {
      return await client.evalSha(sha1, options);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      return client.eval(script.source, options);
    }
  }
  try {
    return await client.evalsha(sha1, 1, key, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return client.eval(script.source, 1, key, ...args);
  }
}

type SetNx = {
  // ioredis: SET key value PX ms NX
  set(key: string, value: string, px: 'PX', ms: number, nx: 'NX'): Promise<unknown>;
};
type NodeRedisSetNx = {
  // node-redis v4 and later (the v4 option names, which v5 and v6 still read)
  set(key: string, value: string, options: { PX: number; NX: true }): Promise<unknown>;
};

/**
 * `SET key value NX PX ms` (no script: the cheapest write Redis has): `true` when it wrote (the key was
 * absent), `false` when the key exists. `undefined`, nothing sent, for a client without `set`.
 */
export function setIfAbsent(
  client: RedisClientLike,
  key: string,
  value: string,
  ms: number,
): Promise<boolean> | undefined {
  if (typeof (client as Partial<SetNx>).set !== 'function') return undefined;
  const reply = isNodeRedis(client)
    ? (client as unknown as NodeRedisSetNx).set(key, value, { PX: ms, NX: true })
    : (client as unknown as SetNx).set(key, value, 'PX', ms, 'NX');
  return reply.then((answer) => answer === 'OK');
}

/**
 * What `WAIT` needs of a Redis client: ioredis (`wait`, a Cluster's `slots` and master `nodes`) or
 * node-redis (`sendCommand`; a cluster's `getSlotMaster`). Structural, as every client type here.
 */
export interface WaitClient {
  isCluster?: unknown;
  options?: { host?: unknown; port?: unknown };
  slots?: unknown;
  nodes?(role: 'master'): WaitClient[];
  wait?(replicas: number, timeoutMs: number): Promise<unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: node-redis' sendCommand has a standalone and a cluster form.
  sendCommand?(...args: any[]): Promise<unknown>;
  getSlotMaster?(slot: number): unknown;
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
function connectionOf(client: WaitClient, key: string): WaitClient {
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
  client: WaitClient,
  key: string,
  replicas: number,
  timeoutMs: number,
): Promise<number> {
  const args = ['WAIT', String(replicas), String(timeoutMs)];
  // node-redis: a cluster routes a command by its first key (to the master that ran the write); a
  // single client sends it as is.
  if (typeof client.getSlotMaster === 'function' && typeof client.sendCommand === 'function')
    return Number(await client.sendCommand(key, false, args));
  const connection = connectionOf(client, key);
  if (typeof connection.wait === 'function') return Number(await connection.wait(replicas, timeoutMs));
  if (typeof connection.sendCommand === 'function') return Number(await connection.sendCommand(args));
  throw new Error('the Redis client has no WAIT command');
}
