import { createToken } from './token.js';
import type { ClaimOptions, ClaimResult, Clock, CompleteOptions, DedupStore } from './types.js';
import { systemClock } from './types.js';
import { assertKey, assertMs, assertToken } from './validate.js';

/**
 * Default {@link MemoryStoreOptions.maxKeys}: 100,000 keys, about 14 MB of heap with 50-character keys
 * (docs/benchmarks.md).
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
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
  prune(): Promise<number>;
  close(): Promise<void>;
}

// A completed record is stored as its expiry (a bare number) to keep a million keys small;
// a claim is an object holding its fencing token.
type Claim = { token: string; leaseEndsAt: number };
type Entry = number | Claim;

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
  // Map iteration order is insertion order: re-inserting on use makes the first key the least recently used.
  const entries = new Map<string, Entry>();
  // One long-lived iterator finds the oldest key: Map iterators survive deletes and inserts, and a fresh
  // `keys().next()` per eviction would rescan the holes deleted keys leave at the front (O(n) each).
  let oldestFirst = entries.keys();

  function evictOldest(): void {
    let next = oldestFirst.next();
    if (next.done) {
      oldestFirst = entries.keys();
      next = oldestFirst.next();
    }
    if (!next.done) entries.delete(next.value);
  }

  function touch(key: string, entry: Entry): void {
    entries.delete(key);
    entries.set(key, entry);
  }

  function owned(key: string, token: string, now: number): Claim | undefined {
    const entry = entries.get(key);
    if (typeof entry !== 'object' || entry.token !== token) return undefined;
    // A lapsed lease is no longer owned: another worker may already hold (or may take) the key.
    return entry.leaseEndsAt > now ? entry : undefined;
  }

  return {
    get size() {
      return entries.size;
    },

    async claim(key: string, { leaseMs }: ClaimOptions): Promise<ClaimResult> {
      assertKey(key);
      assertMs('leaseMs', leaseMs);
      const now = clock.now();
      const entry = entries.get(key);
      if (typeof entry === 'number' && entry > now) {
        touch(key, entry);
        return { status: 'completed' };
      }
      if (typeof entry === 'object' && entry.leaseEndsAt > now) {
        return { status: 'in_progress', leaseEndsAt: entry.leaseEndsAt };
      }
      // Free, expired or a crashed worker's lapsed lease: take it over with a new token.
      const claim: Claim = { token: createToken(), leaseEndsAt: now + leaseMs };
      touch(key, claim);
      while (entries.size > maxKeys) evictOldest();
      return { status: 'claimed', token: claim.token, leaseEndsAt: claim.leaseEndsAt };
    },

    async complete(key: string, token: string, { ttlMs }: CompleteOptions): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      assertMs('ttlMs', ttlMs);
      const now = clock.now();
      if (!owned(key, token, now)) return false;
      // In place, not moved: the claim just made it the most recent, and a move leaves a hole in the table.
      entries.set(key, now + ttlMs);
      return true;
    },

    async release(key: string, token: string): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      if (!owned(key, token, clock.now())) return false;
      entries.delete(key);
      return true;
    },

    async extend(key: string, token: string, { leaseMs }: ClaimOptions): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      assertMs('leaseMs', leaseMs);
      const now = clock.now();
      const claim = owned(key, token, now);
      if (!claim) return false;
      claim.leaseEndsAt = now + leaseMs;
      return true;
    },

    async prune(): Promise<number> {
      const now = clock.now();
      let removed = 0;
      for (const [key, entry] of entries) {
        const endsAt = typeof entry === 'number' ? entry : entry.leaseEndsAt;
        if (endsAt <= now) {
          entries.delete(key);
          removed++;
        }
      }
      return removed;
    },

    async close(): Promise<void> {
      entries.clear();
    },
  };
}
