/**
 * @module
 * The `DedupStore` contract: claim / complete / release with fencing tokens, so that a delivery's
 * handler runs once however many copies arrive and whichever worker crashes.
 */

/**
 * Outcome of {@link DedupStore.claim}.
 *
 * @example
 * ```ts
 * import type { ClaimResult } from '@svc/webhooks';
 *
 * const result: ClaimResult = await store.claim('mail:delivery:dlv_1', { leaseMs: 30_000 });
 * if (result.status === 'claimed') await store.complete('mail:delivery:dlv_1', result.token, { ttlMs: 86_400_000 });
 * ```
 */
export type ClaimResult =
  /** This caller owns the key until `leaseEndsAt`; every later write must carry `token`. */
  | { status: 'claimed'; token: string; leaseEndsAt: number }
  /** Another caller owns the key; its lease ends at `leaseEndsAt` (epoch ms) unless completed first. */
  | { status: 'in_progress'; leaseEndsAt: number }
  /** The key was completed; the delivery is a duplicate. */
  | { status: 'completed' };

/**
 * What every store call may carry. A receiver owns the deadline of each call it makes (it knows the
 * sender's 10-second window and the lease) and passes it here; a store with a time bound of its own
 * (the Redis and Postgres stores' `callTimeoutMs`) uses the call's instead, and keeps its own for calls
 * made without one (your code calling the store directly: purge jobs, scripts).
 *
 * @example
 * ```ts
 * import type { StoreCallOptions } from '@svc/webhooks';
 *
 * const bounded: StoreCallOptions = { callTimeoutMs: 2_000 };
 * await store.release('mail:delivery:dlv_1', token, bounded);
 * ```
 */
export interface StoreCallOptions {
  /**
   * How long this call may take, in ms, before it fails with `store_unavailable` (0 = no bound).
   * Default: the store's own bound, if it has one. Stores without a time bound may ignore it.
   */
  callTimeoutMs?: number;
}

/**
 * Options of {@link DedupStore.claim} (and of `extend`).
 *
 * @example
 * ```ts
 * import type { ClaimOptions } from '@svc/webhooks';
 *
 * const options: ClaimOptions = { leaseMs: 30_000, token: crypto.randomUUID() };
 * const result = await store.claim('mail:delivery:dlv_1', options);
 * ```
 */
export interface ClaimOptions extends StoreCallOptions {
  /** How long the claim holds before another caller may take it over, in milliseconds. */
  leaseMs: number;
  /**
   * The fencing token this claim gets if it wins; default a fresh one made by the store. Choose it
   * yourself to be able to {@link DedupStore.abandon} a claim whose answer you never saw (a timeout, a
   * dropped connection). It must be unique per claim across every process using the store
   * (`crypto.randomUUID()` will do; the receivers use a random prefix per process and a counter). The
   * same claim sent twice (a client resending it after a reconnect) gets the lease it already holds.
   */
  token?: string;
}

/**
 * Options of {@link DedupStore.abandon}.
 *
 * @example
 * ```ts
 * import type { AbandonOptions } from '@svc/webhooks';
 *
 * // A claim timed out: whatever the store did with it, it must hold no lease.
 * const options: AbandonOptions = { leaseMs: 30_000 };
 * await store.abandon?.('mail:delivery:dlv_1', token, options);
 * ```
 */
export interface AbandonOptions extends StoreCallOptions {
  /**
   * The `leaseMs` the abandoned claim was made with. The store remembers the abandoned token at
   * least this long, so a copy of the claim that is still queued somewhere and runs later is a no-op.
   */
  leaseMs: number;
}

/**
 * Options of {@link DedupStore.complete}.
 *
 * @example
 * ```ts
 * import type { CompleteOptions } from '@svc/webhooks';
 *
 * const ninetyDays: CompleteOptions = { ttlMs: 90 * 86_400_000 };
 * await store.complete('mail:delivery:dlv_1', token, ninetyDays);
 * ```
 */
export interface CompleteOptions extends StoreCallOptions {
  /** How long the completed record is kept (and duplicates are recognised), in milliseconds. */
  ttlMs: number;
}

/**
 * A deduplication store. Implementations must make `claim` atomic: of any number of concurrent
 * claims of one key, exactly one gets `claimed`. A claim whose lease ended may be taken over; the
 * new owner gets a new token, and writes with the old token (`complete`, `release`, `extend`) return
 * `false` and change nothing (fencing).
 *
 * A claim whose outcome the caller did not see (it timed out or the connection failed while the
 * store may still run it) is made harmless with `abandon(key, token)`, in whichever order the two
 * reach the store: see {@link DedupStore.abandon}.
 *
 * Shipped implementations: `createMemoryStore()` (default), `createRedisStore()` from
 * `@svc/webhooks/redis`, `createPostgresStore()` from `@svc/webhooks/postgres`, `createD1Store()` from
 * `@svc/webhooks/d1`, `createDynamoDBStore()` from `@svc/webhooks/dynamodb`.
 *
 * @example
 * ```ts
 * const result = await store.claim('mail:delivery:abc', { leaseMs: 30_000 });
 * if (result.status === 'claimed') {
 *   try {
 *     await handle();
 *     await store.complete('mail:delivery:abc', result.token, { ttlMs: 90 * 86_400_000 });
 *   } catch (error) {
 *     await store.release('mail:delivery:abc', result.token);
 *     throw error;
 *   }
 * }
 * ```
 */
export interface DedupStore {
  /** Claims `key` for `leaseMs`, or reports that it is in progress or completed. */
  claim(key: string, options: ClaimOptions): Promise<ClaimResult>;
  /** Marks a claimed key completed for `ttlMs`. `false` if `token` no longer owns the key. */
  complete(key: string, token: string, options: CompleteOptions): Promise<boolean>;
  /** Drops a claim so the next attempt runs again. `false` if `token` no longer owns the key. */
  release(key: string, token: string, options?: StoreCallOptions): Promise<boolean>;
  /**
   * Makes sure a claim made with `token` holds no lease, whether it already ran or is still queued or
   * in flight. A live lease of `token` is dropped; a free or expired key gets a marker that is free
   * for every other claimer but turns a later claim carrying `token` into a no-op (it answers
   * `in_progress` with `leaseEndsAt` = now). Resolves `true` once no claim with `token` can hold the
   * key (also when the key is completed), `false` while another token's live lease holds the key (a
   * queued claim with `token` could still take it after that lease is gone: call again later).
   * Optional for other stores; the shipped stores implement it and the receivers use it when present.
   */
  abandon?(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  /** Extends a held lease to `leaseMs` from now. `false` if `token` no longer owns the key. */
  extend?(key: string, token: string, options: ClaimOptions): Promise<boolean>;
  /** Deletes expired records; returns how many. Stores that expire by themselves may omit it. */
  prune?(): Promise<number>;
  /** Releases the store's own resources (not a client that was passed in). */
  close?(): Promise<void>;
}
