import { type Clock, systemClock } from '../shared/clock.js';
import type { ClaimTerms, SyncClaims } from './claims.js';
import { createLruSlots } from './lru-slots.js';
import { type Claimed, type MemoryCore, memoryClaims, type Unclaimed } from './memory-claims.js';
import { createToken } from './token.js';
import type { AbandonOptions, ClaimOptions, ClaimResult, CompleteOptions, DedupStore } from './types.js';
import { assertKey, assertMs, assertToken } from './validate.js';

/**
 * Default {@link MemoryStoreOptions.maxKeys}: 100,000 keys, about 12 MB with 50-character keys, the key
 * strings included (docs/benchmarks.md).
 *
 * @example
 * ```ts
 * createMemoryStore({ maxKeys: DEFAULT_MEMORY_STORE_MAX_KEYS * 5 }); // a busier single process
 * ```
 */
export const DEFAULT_MEMORY_STORE_MAX_KEYS = 100_000;

/**
 * Options of {@link createMemoryStore}.
 *
 * @example
 * ```ts
 * const options: MemoryStoreOptions = { maxKeys: 10_000, clock: { now: () => Date.now() } };
 * ```
 */
export interface MemoryStoreOptions {
  /**
   * Most keys kept (claims and completed records together). Past it the least recently used key is
   * evicted, so memory stays bounded; a duplicate of an evicted delivery runs its handler again.
   * Default {@link DEFAULT_MEMORY_STORE_MAX_KEYS}.
   */
  maxKeys?: number;
  /** Source of time in epoch ms; default the wall clock. */
  clock?: Clock;
}

/**
 * The memory store: a {@link DedupStore} plus introspection for tests and metrics.
 *
 * @example
 * ```ts
 * const store: MemoryStore = createMemoryStore();
 * metrics.gauge('webhook_dedup_keys', store.size);
 * ```
 */
export interface MemoryStore extends DedupStore {
  /** Keys currently held (expired ones count until they are touched or pruned). */
  readonly size: number;
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
  prune(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The memory stores made by {@link createMemoryStore}, each with its synchronous core: a receiver given
 * one as `dedup` claims through that core (memory-claims.ts) rather than through its promises. A
 * WeakMap, not a property: nothing is added to the store object (a spread of it stays a plain store).
 */
const cores = new WeakMap<DedupStore, MemoryCore>();

/** The synchronous claims of `store` when {@link createMemoryStore} made it, with `terms`. */
export function memoryClaimsOf(store: DedupStore, terms: ClaimTerms): SyncClaims | undefined {
  const core = cores.get(store);
  return core === undefined ? undefined : memoryClaims(core, terms);
}

// Shared and frozen: a duplicate is the commonest answer and carries nothing of its own.
const COMPLETED: Unclaimed = Object.freeze({ status: 'completed' });

const claimResult: Claimed<ClaimResult> = (_slot, token, leaseEndsAt) => ({
  status: 'claimed',
  token,
  leaseEndsAt,
});

/**
 * An in-process {@link DedupStore}: the default of the receivers. Atomic without locks because every
 * state change happens synchronously before the returned promise settles (JavaScript runs one
 * callback at a time). Expiry is checked on access; a least-recently-used cap bounds memory.
 *
 * Scope: one process. Several processes or hosts behind a load balancer each keep their own records,
 * so a retry that lands on another instance runs again: use the Redis or Postgres store there.
 *
 * @example
 * ```ts
 * import { createMailReceiver, createMemoryStore } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({
 *   secret: process.env.SVC_MAIL_WEBHOOK_SECRET!,
 *   dedup: createMemoryStore({ maxKeys: 50_000 }),
 * });
 * ```
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const { maxKeys = DEFAULT_MEMORY_STORE_MAX_KEYS, clock = systemClock } = options;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
    throw new RangeError('createMemoryStore: maxKeys must be a positive whole number.');
  }
  // Each key has a numbered slot (lru-slots.ts); its state is in flat arrays under that number, which
  // keeps a million keys compact and out of the garbage collector's way. A completed record is its
  // expiry in `ends` and no token; a claim is its lease end in `ends` plus its fencing token; an
  // abandoned token (DedupStore.abandon) is that token with its marker's end negated in `ends`, so
  // every other check reads it as expired (free) without a branch of its own.
  const slots = createLruSlots(maxKeys);
  let ends = new Float64Array(1);
  let tokens: (string | undefined)[] = [undefined];

  function added(key: string): number {
    const slot = slots.add(key);
    if (slot >= ends.length) {
      const length = Math.min(maxKeys + 1, Math.max(slot + 1, ends.length * 2));
      const wider = new Float64Array(length);
      wider.set(ends);
      ends = wider;
      tokens = tokens.concat(new Array(length - tokens.length).fill(undefined)); // exact length: no slack
    }
    return slot;
  }

  function remove(slot: number): void {
    slots.remove(slot);
    tokens[slot] = undefined;
  }

  // Tokens only have to be unique within this store: a random per-store prefix (so another store's
  // token never matches) and a counter, cheaper than fresh random bytes on every claim. The prefix is
  // drawn at the first claim: Workers refuse random values in global scope, where stores are created.
  let prefix: string | undefined;
  let issued = 0;

  // Each call changes the state synchronously and hands back a settled promise: plain functions with
  // Promise.resolve rather than `async` ones, which cost a generator and a promise more per call (a
  // throw from the checks still comes back as a rejection).
  // A claim that wins is made by `claimed` (a ClaimResult for the DedupStore methods, a held claim for
  // the receiver's claims: memory-claims.ts), so neither path makes an object it then throws away.
  // Arguments checked by the caller.
  function take<T>(
    key: string,
    leaseMs: number,
    chosen: string | undefined,
    claimed: Claimed<T>,
  ): T | Unclaimed {
    const now = clock.now();
    let slot = slots.find(key);
    if (slot === 0) {
      slot = added(key);
    } else {
      const endsAt = ends[slot]!;
      if (endsAt > now && tokens[slot] !== undefined) {
        // The same claim again (a resend) holds the lease it took.
        if (chosen !== undefined && tokens[slot] === chosen) return claimed(slot, chosen, endsAt);
        return { status: 'in_progress', leaseEndsAt: endsAt };
      }
      slots.touch(slot);
      if (endsAt > now) return COMPLETED;
      // This very token was abandoned: the claim must not run (DedupStore.abandon).
      if (endsAt < -now && chosen !== undefined && tokens[slot] === chosen) {
        return { status: 'in_progress', leaseEndsAt: now };
      }
    }
    // Free, expired or a crashed worker's lapsed lease: take it over with a new token.
    prefix ??= `${createToken()}.`;
    const token = chosen ?? prefix + (++issued).toString(36);
    const leaseEndsAt = now + leaseMs;
    tokens[slot] = token;
    ends[slot] = leaseEndsAt;
    return claimed(slot, token, leaseEndsAt);
  }

  // The writes of a held claim, by the slot its claim took: `token` still owns it while the slot holds
  // that token and a live lease (tokens are unique per store, so a slot given to another key since
  // holds another token or none). No key lookup, no argument checks: the claim checked them.
  function completeAt(slot: number, token: string, ttlMs: number): boolean {
    const now = clock.now();
    if (tokens[slot] !== token || ends[slot]! <= now) return false;
    // Not touched: the claim just made it the most recent.
    ends[slot] = now + ttlMs;
    tokens[slot] = undefined;
    return true;
  }

  function releaseAt(slot: number, token: string): boolean {
    if (tokens[slot] !== token || ends[slot]! <= clock.now()) return false;
    remove(slot);
    return true;
  }

  function extendAt(slot: number, token: string, leaseMs: number): boolean {
    const now = clock.now();
    if (tokens[slot] !== token || ends[slot]! <= now) return false;
    ends[slot] = now + leaseMs;
    return true;
  }

  function claimNow(key: string, leaseMs: number, chosen: string | undefined): ClaimResult {
    assertKey(key);
    assertMs('leaseMs', leaseMs);
    if (chosen !== undefined) assertToken(chosen);
    return take(key, leaseMs, chosen, claimResult);
  }

  function completeNow(key: string, token: string, ttlMs: number): boolean {
    assertKey(key);
    assertToken(token);
    assertMs('ttlMs', ttlMs);
    const slot = slots.find(key);
    return slot !== 0 && completeAt(slot, token, ttlMs);
  }

  function releaseNow(key: string, token: string): boolean {
    assertKey(key);
    assertToken(token);
    const slot = slots.find(key);
    return slot !== 0 && releaseAt(slot, token);
  }

  function abandonNow(key: string, token: string, { leaseMs }: AbandonOptions): boolean {
    assertKey(key);
    assertToken(token);
    assertMs('leaseMs', leaseMs);
    const now = clock.now();
    let slot = slots.find(key);
    if (slot === 0) {
      slot = added(key);
    } else if (ends[slot]! > now) {
      if (tokens[slot] === undefined) return true; // completed: a late claim is a duplicate
      if (tokens[slot] !== token) return false; // another claimer's live lease
    }
    tokens[slot] = token;
    ends[slot] = -(now + leaseMs);
    return true;
  }

  function extendNow(key: string, token: string, leaseMs: number): boolean {
    assertKey(key);
    assertToken(token);
    assertMs('leaseMs', leaseMs);
    const slot = slots.find(key);
    return slot !== 0 && extendAt(slot, token, leaseMs);
  }

  const core: MemoryCore = { take, completeAt, releaseAt, extendAt };

  const store: MemoryStore = {
    get size() {
      return slots.size;
    },

    claim(key: string, options: ClaimOptions): Promise<ClaimResult> {
      try {
        return Promise.resolve(claimNow(key, options.leaseMs, options.token));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    complete(key: string, token: string, options: CompleteOptions): Promise<boolean> {
      try {
        return Promise.resolve(completeNow(key, token, options.ttlMs));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    release(key: string, token: string): Promise<boolean> {
      try {
        return Promise.resolve(releaseNow(key, token));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    abandon(key: string, token: string, options: AbandonOptions): Promise<boolean> {
      try {
        return Promise.resolve(abandonNow(key, token, options));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    extend(key: string, token: string, options: ClaimOptions): Promise<boolean> {
      try {
        return Promise.resolve(extendNow(key, token, options.leaseMs));
      } catch (error) {
        return Promise.reject(error);
      }
    },

    async prune(): Promise<number> {
      const now = clock.now();
      let removed = 0;
      for (let slot = slots.oldest(); slot !== 0; ) {
        const newer = slots.newer(slot); // read first: remove() reuses the link
        if (Math.abs(ends[slot]!) <= now) {
          remove(slot);
          removed++;
        }
        slot = newer;
      }
      return removed;
    },

    async close(): Promise<void> {
      slots.clear();
      ends = new Float64Array(1);
      tokens = [undefined];
    },
  };
  cores.set(store, core);
  return store;
}
