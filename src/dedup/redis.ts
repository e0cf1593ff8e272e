/**
 * @module
 * `@svc/webhooks/redis`: a {@link DedupStore} on Redis for receivers running on several processes or
 * hosts. Works with `ioredis` and node-redis (`redis` v4+) clients that you create and connect.
 */
import { type Clock, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import type { RedisClientLike, WaitClient } from './redis-client.js';
import { defineScript, evalScript, isRedisClient, setIfAbsent, waitForReplicas } from './redis-client.js';
import {
  ABANDON_SCRIPT,
  CLAIM_SCRIPT,
  COMPLETE_SCRIPT,
  DROP_SCRIPT,
  EXTEND_SCRIPT,
  RELEASE_SCRIPT,
  SWAP_SCRIPT,
} from './redis-scripts.js';
import { callTimeout, storeUnavailable, withTimeout } from './store-error.js';
import { storeFromBackend } from './store-kit.js';
import type { AbandonOptions, ClaimOptions, ClaimResult, DedupStore, StoreCallOptions } from './types.js';

/**
 * Options of {@link createRedisStore}.
 *
 * @example
 * ```ts
 * const options: RedisStoreOptions = { client, prefix: 'shop:webhooks:', callTimeoutMs: 2_000 };
 * ```
 */
export interface RedisStoreOptions {
  /** A connected `ioredis` client/cluster or node-redis v4+ client/cluster. The store never closes it. */
  client: RedisClientLike;
  /** Prepended to every key. Default `'webhooks:dedup:'`. */
  prefix?: string;
  /**
   * Source of time in epoch ms. Default: the Redis server's `TIME`, so hosts with skewed clocks agree
   * on when a lease ends. Inject one only for tests (a virtual clock) or a single-host setup.
   */
  clock?: Clock;
  /**
   * Longest wait for one command before it fails with `store_unavailable`, in ms; `0` for none.
   * Default 3000, well inside the senders' 10-second limit. It applies to calls made without a
   * `callTimeoutMs` of their own, i.e. by your code directly (purge jobs, scripts): a receiver passes its
   * `storeTimeoutMs` (default 2000) with every call it makes, and that one decides. Configure the client too (ioredis `commandTimeout` and `maxRetriesPerRequest`,
   * node-redis `disableOfflineQueue`) so it does not queue commands for long while disconnected.
   */
  callTimeoutMs?: number;
  /**
   * Opt-in: after a claim is granted and after a completion, wait until `replicas` replicas have
   * the write (Redis `WAIT`, at most `waitMs`); fewer is `store_unavailable`: a refused claim (the
   * receiver answers 503 and abandons it, so the sender's retry runs it) or a reported completion.
   * Redis replicates asynchronously, so without it a failover right after a write can lose that
   * claim or completion and let a retry run the handlers a second time (docs/handoff-bullmq.md "Redis
   * requirements"). Costs one round trip and the replica's lag per claim and per completion.
   */
  waitForReplicas?: { replicas: number; waitMs: number };
}

/**
 * The Redis store: a {@link DedupStore} with `extend`. Records expire by themselves (no `prune`).
 *
 * @example
 * ```ts
 * const store: RedisStore = createRedisStore({ client });
 * await store.extend(key, token, { leaseMs: 30_000 }); // a slow handler keeps its claim
 * ```
 */
export interface RedisStore extends DedupStore {
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
}

const claimScript = defineScript(CLAIM_SCRIPT);
const completeScript = defineScript(COMPLETE_SCRIPT);
const releaseScript = defineScript(RELEASE_SCRIPT);
const extendScript = defineScript(EXTEND_SCRIPT);
const abandonScript = defineScript(ABANDON_SCRIPT);
const swapScript = defineScript(SWAP_SCRIPT);
const dropScript = defineScript(DROP_SCRIPT);

/**
 * A {@link DedupStore} on Redis 5 or later. A claim of a free key is one `SET NX PX` (no script: the
 * lightest write, which matters when many deliveries are in flight); a key found taken is judged by a
 * Lua script. complete, release, extend and abandon are one script each. Every call touches one key:
 * atomic, one round trip per fresh claim and per complete, and safe on Redis Cluster. Client errors and timeouts become
 * `WebhookError('store_unavailable')` (503): the receiver fails closed and the sender retries.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createRedisStore } from '@svc/webhooks/redis';
 *
 * const client = new Redis(process.env.REDIS_URL!, { commandTimeout: 2_000, maxRetriesPerRequest: 1 });
 * client.on('error', (error) => console.warn('redis', error.message));
 * const receiver = createMailReceiver({
 *   secret: process.env.SVC_MAIL_WEBHOOK_SECRET!,
 *   dedup: createRedisStore({ client }),
 * });
 * ```
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { createRedisStore } from '@svc/webhooks/redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL, disableOfflineQueue: true })
 *   .on('error', (error) => console.warn('redis', error.message)) // without it an error ends the process
 *   .connect();
 * const dedup = createRedisStore({ client, prefix: 'myapp:webhooks:' });
 * ```
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const {
    client,
    prefix = 'webhooks:dedup:',
    clock,
    callTimeoutMs = 3_000,
    waitForReplicas: replication,
  } = options;
  if (!isRedisClient(client)) {
    throw new TypeError('createRedisStore: `client` must be an ioredis or node-redis (v4+) client.');
  }
  if (replication !== undefined) {
    for (const [name, value] of [
      ['replicas', replication?.replicas],
      ['waitMs', replication?.waitMs],
    ] as const) {
      if (!Number.isSafeInteger(value) || (value as number) <= 0)
        throw new WebhookError(
          'options_invalid',
          `createRedisStore: waitForReplicas.${name} must be a positive whole number (got ${String(value)}).`,
        );
    }
  }

  /** With `waitForReplicas`: the write of `key` is on enough replicas, or `store_unavailable`. */
  async function replicated(key: string, options: StoreCallOptions | undefined): Promise<void> {
    if (replication === undefined) return;
    const { replicas, waitMs } = replication;
    let acknowledged: number;
    try {
      acknowledged = await withTimeout(
        waitForReplicas(client as WaitClient, prefix + key, replicas, waitMs),
        callTimeout(options, callTimeoutMs),
        'Redis',
      );
    } catch (error) {
      throw storeUnavailable('Redis', error);
    }
    if (acknowledged < replicas)
      throw storeUnavailable(
        'Redis',
        new Error(`${acknowledged} of ${replicas} replicas acknowledged the write within ${waitMs} ms`),
      );
  }
  // Hash the scripts now, so that each later call goes out in the caller's tick (evalScript).
  for (const script of [claimScript, completeScript, releaseScript, extendScript, abandonScript]) {
    script.sha1.catch(() => undefined);
  }
  for (const script of [swapScript, dropScript]) script.sha1.catch(() => undefined);
  /** Settles with `sent`, or `store_unavailable` on its failure or past `bound` ms (0: none). */
  async function call<T>(sent: Promise<T>, bound: number): Promise<T> {
    try {
      return await withTimeout(sent, bound, 'Redis');
    } catch (error) {
      throw storeUnavailable('Redis', error);
    }
  }
  // '-1' tells the scripts to read the server's TIME.
  const now = (): string => (clock ? String(clock.now()) : '-1');

  async function run(
    script: typeof claimScript,
    key: string,
    args: string[],
    bound: number,
  ): Promise<unknown> {
    return call(evalScript(client, script, prefix + key, args), bound);
  }

  async function compareAndSet(
    script: typeof claimScript,
    key: string,
    args: string[],
    options: StoreCallOptions | undefined,
  ) {
    const reply = await run(script, key, args, callTimeout(options, callTimeoutMs));
    if (reply !== 1 && reply !== 0) throw unexpected(reply);
    return reply === 1;
  }

  /**
   * A write of `token`'s own lease: on the server's time, compared value for value (its lease is
   * `L::<token>`); with an injected clock, by the script that reads the lease's end.
   */
  function owned(
    onClock: typeof claimScript,
    onServer: typeof claimScript,
    key: string,
    token: string,
    value: string,
    ms: number,
    options: StoreCallOptions | undefined,
  ) {
    if (clock) return compareAndSet(onClock, key, [token, String(ms), now()], options);
    const args = onServer === dropScript ? [`L::${token}`] : [`L::${token}`, value, String(ms)];
    return compareAndSet(onServer, key, args, options);
  }

  const store = storeFromBackend({
    name: 'Redis',
    async claim(key, token, leaseMs, options): Promise<ClaimResult> {
      const bound = callTimeout(options, callTimeoutMs);
      const started = performance.now();
      // A free key: SET NX, no script. Its lease end is the key's expiry (empty in the value) unless a
      // clock is injected; the answer's `leaseEndsAt` is then read on this host's clock.
      const endsAt = clock ? clock.now() + leaseMs : undefined;
      const leaseEndsAt = endsAt ?? systemClock.now() + leaseMs;
      const fresh = setIfAbsent(client, prefix + key, `L:${endsAt ?? ''}:${token}`, leaseMs);
      if (fresh !== undefined && (await call(fresh, bound))) {
        await replicated(key, options);
        return { status: 'claimed', token, leaseEndsAt };
      }
      // Taken: the script judges the record, within what is left of the bound (never sent past it).
      const left = bound > 0 ? bound - (performance.now() - started) : 0;
      if (bound > 0 && left < 1) throw storeUnavailable('Redis', new Error(`no answer within ${bound} ms`));
      const reply = await run(claimScript, key, [token, String(leaseMs), now()], left);
      return fromScript(reply, token, () => replicated(key, options));
    },
    async complete(key, token, ttlMs, options) {
      const completed = await owned(completeScript, swapScript, key, token, 'D:', ttlMs, options);
      if (completed) await replicated(key, options);
      return completed;
    },
    release: (key, token, options) => owned(releaseScript, dropScript, key, token, '', 0, options),
    abandon: (key, token, leaseMs, options) =>
      compareAndSet(abandonScript, key, [token, String(leaseMs), now()], options),
    extend: (key, token, leaseMs, options) =>
      owned(extendScript, swapScript, key, token, `L::${token}`, leaseMs, options),
  });
  return store;
}

/** The claim script's answer as a claim's result; `granted` runs before a `claimed` is returned. */
async function fromScript(reply: unknown, token: string, granted: () => Promise<void>): Promise<ClaimResult> {
  if (!Array.isArray(reply)) throw unexpected(reply);
  const [status, endsAt] = reply as unknown[];
  if (status === 'completed') return { status };
  const leaseEndsAt = Number(endsAt);
  if (!Number.isFinite(leaseEndsAt)) throw unexpected(reply);
  if (status === 'claimed') {
    await granted();
    return { status, token, leaseEndsAt };
  }
  if (status === 'in_progress') return { status, leaseEndsAt };
  throw unexpected(reply);
}

function unexpected(reply: unknown): WebhookError {
  return storeUnavailable('Redis', new Error(`unexpected script reply ${JSON.stringify(reply)}`));
}

export type { IoRedisLike, NodeRedisLike, RedisClientLike } from './redis-client.js';
