/**
 * Keeping a claim's lease while its handlers run. The lease (`leaseMs`) is what stops another attempt
 * from running a delivery at the same time; a handler that outlives it (a slow hand-off job, a
 * direct-mode handler past its deadline that ignores its `signal`) would otherwise be overlapped by
 * the next attempt. So the lease is extended (`DedupStore.extend`) every third of `leaseMs` from the
 * claim until the handlers settle, and a store that answers `false` (the lease ended and the key may
 * be someone else's) is reported as `lease_lost` at once. The turns run on the receiver's scheduler
 * (timers.ts) with the delivery's deadline, one entry per delivery (process-delivery.ts).
 *
 * A store without `extend` keeps the old bound: the lease must outlive the handler budget.
 */
import type { ClaimSettings } from './claims.js';
import { emit, errField, type LogFields, type LogSink } from './logger.js';

/** What keeping a lease needs from the receiver. */
export interface LeaseSettings extends ClaimSettings {
  readonly logger: LogSink | undefined;
}

/** Milliseconds between two extensions of a lease of `leaseMs`. */
export function leaseTurnMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 3));
}

/**
 * One extension of the lease of `token` on `key`: `false` when the store refused it (the token no
 * longer owns the key), `true` when extended, `undefined` when the call failed (logged unless
 * `stopped()` by then; the next turn tries again: the lease still has two thirds of `leaseMs` left).
 */
export async function extendLease(
  settings: LeaseSettings,
  key: string,
  token: string,
  fields: () => LogFields,
  stopped: () => boolean,
): Promise<boolean | undefined> {
  const { store, leaseMs, storeTimeoutMs, logger } = settings;
  try {
    return await store.extend!(key, token, { leaseMs, callTimeoutMs: storeTimeoutMs });
  } catch (error) {
    if (!stopped())
      emit(logger, 'warn', 'dedup store extend failed; trying again', {
        ...fields(),
        err: errField(error),
      });
    return undefined;
  }
}
