/**
 * The memory store's claims: the claim port answered at once, straight from the store's synchronous
 * core (memory-store.ts), so a delivery over a memory store waits for nothing (core/delivery/run.ts,
 * docs/benchmarks.md "Fast and plain"). No token is drawn and no bound applies: the store numbers its
 * own tokens, and a call that returns before anything else runs cannot stall.
 */
import type { ClaimAnswer, ClaimTerms, Settled, SyncClaims, SyncHeld } from './claims.js';
import { DUPLICATE } from './claims.js';
import type { ClaimResult } from './types.js';
import { assertKey, assertMs } from './validate.js';

/** Makes the answer of a claim that won: the slot it took, its token, its lease end. */
export type Claimed<T> = (slot: number, token: string, leaseEndsAt: number) => T;

/** The answer of a claim that did not win. */
export type Unclaimed = Exclude<ClaimResult, { status: 'claimed' }>;

/**
 * The synchronous core of a memory store, its state changes as values, over arguments the caller
 * checked: a claim of a key, and the writes of a claim that won, by the slot it took (`false` once its
 * token no longer holds a live lease there).
 */
export interface MemoryCore {
  take<T>(key: string, leaseMs: number, token: string | undefined, claimed: Claimed<T>): T | Unclaimed;
  completeAt(slot: number, token: string, ttlMs: number): boolean;
  releaseAt(slot: number, token: string): boolean;
  extendAt(slot: number, token: string, leaseMs: number): boolean;
}

/**
 * One claim held on a memory store. A class rather than closures: one is made per delivery on the
 * hot path. Fields are declared and set in the constructor (see core/delivery/run.ts's DeliveryRun);
 * `status` and `sync`, the same for every instance, are on the prototype.
 */
class MemoryHeld implements SyncHeld {
  declare readonly status: 'claimed';
  declare readonly sync: true;
  declare readonly token: string;
  declare readonly leaseEndsAt: number;
  declare private readonly _claims: MemoryClaims;
  declare private readonly _slot: number;

  constructor(claims: MemoryClaims, slot: number, token: string, leaseEndsAt: number) {
    this.token = token;
    this.leaseEndsAt = leaseEndsAt;
    this._claims = claims;
    this._slot = slot;
  }

  // The arguments were checked when the claim was made; only the clock could throw.
  complete(): Settled {
    const claims = this._claims;
    try {
      return claims.core.completeAt(this._slot, this.token, claims.ttlMs);
    } catch (error) {
      return { error };
    }
  }

  release(): Settled {
    try {
      return this._claims.core.releaseAt(this._slot, this.token);
    } catch (error) {
      return { error };
    }
  }

  extend(): Settled {
    const claims = this._claims;
    try {
      return claims.core.extendAt(this._slot, this.token, claims.leaseMs);
    } catch (error) {
      return { error };
    }
  }
}
Object.defineProperties(MemoryHeld.prototype, { status: { value: 'claimed' }, sync: { value: true } });

/** The claims of one receiver over one memory store. */
class MemoryClaims implements SyncClaims {
  declare readonly sync: true;
  declare readonly core: MemoryCore;
  declare readonly leaseMs: number;
  declare readonly ttlMs: number;
  declare private readonly _held: Claimed<MemoryHeld>;

  constructor(core: MemoryCore, terms: ClaimTerms) {
    const { leaseMs, ttlMs } = terms;
    // Checked once here, not on every claim and write (the receivers check them too).
    assertMs('leaseMs', leaseMs);
    assertMs('ttlMs', ttlMs);
    this.sync = true;
    this.core = core;
    this.leaseMs = leaseMs;
    this.ttlMs = ttlMs;
    this._held = (slot, token, leaseEndsAt) => new MemoryHeld(this, slot, token, leaseEndsAt);
  }

  claim(key: string): ClaimAnswer<SyncHeld> {
    let answer: MemoryHeld | Unclaimed;
    try {
      assertKey(key);
      answer = this.core.take(key, this.leaseMs, undefined, this._held);
    } catch (error) {
      return { status: 'failed', error };
    }
    if (answer.status === 'claimed') return answer;
    if (answer.status === 'completed') return DUPLICATE;
    return { status: 'busy', leaseEndsAt: answer.leaseEndsAt };
  }
}

/** The synchronous claims of the memory store whose core is `core`, with `terms`. */
export function memoryClaims(core: MemoryCore, terms: ClaimTerms): SyncClaims {
  return new MemoryClaims(core, terms);
}
