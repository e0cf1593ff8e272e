/**
 * The dedup store as the receive path sees it: claim, then settle (complete after success, release
 * after failure), each answering a value or a {@link StoreCallFailed}, never throwing. Chosen once per
 * receiver: the receiver's own memory store answers synchronously (it cannot hang, so no timer); any
 * other store is bounded by `storeTimeoutMs`, its lost claims and failed releases abandoned in the
 * background (claim-within.ts).
 */
import { syncOpsOf } from '../dedup/sync-store.js';
import type { ClaimResult } from '../dedup/types.js';
import type { Awaitable } from './awaitable.js';
import { abandonClaim, claimWithin } from './claim-within.js';
import type { ResolvedOptions } from './receiver-options.js';
import { completeWithin, releaseWithin, StoreCallFailed } from './store-calls.js';

/** What the receive path needs from the dedup store. */
export interface StoreOps {
  /** Claims `key` for `leaseMs`, with a token chosen by the receiver. */
  claim(key: string): Awaitable<ClaimResult | StoreCallFailed>;
  /**
   * Completes (`success`) or releases the claim of `token`: `true`, `false` when the lease ended and
   * the write was fenced (`lease_lost`), or the failure.
   */
  settle(key: string, token: string, success: boolean): Awaitable<boolean | StoreCallFailed>;
}

/** The store operations of a receiver, chosen once from its options. */
export function storeOpsFor(options: ResolvedOptions): StoreOps {
  const { dedup, leaseMs, ttlMs, storeTimeoutMs } = options;
  const sync = syncOpsOf(dedup);
  if (sync) {
    return {
      claim(key) {
        try {
          return sync.claim(key, leaseMs);
        } catch (error) {
          return new StoreCallFailed('claim', error);
        }
      },
      settle(key, token, success) {
        try {
          return success ? sync.complete(key, token, ttlMs) : sync.release(key, token);
        } catch (error) {
          return new StoreCallFailed(success ? 'complete' : 'release', error);
        }
      },
    };
  }
  return {
    claim: (key) => claimWithin(dedup, key, leaseMs, storeTimeoutMs),
    settle(key, token, success) {
      if (success) return completeWithin(dedup, key, token, ttlMs, storeTimeoutMs);
      return releaseWithin(dedup, key, token, storeTimeoutMs).then((result) => {
        // A release that failed may not have run: the claim would hold until its lease ends and the
        // CRM service's quick retries (§6 rule 5: 1 s, 2 s) would get 409. Abandoning the token drops
        // the lease whether the release ran or not, retried in the background (claim-within.ts).
        if (result instanceof StoreCallFailed) abandonClaim(dedup, key, token, leaseMs, storeTimeoutMs);
        return result;
      });
    },
  };
}
