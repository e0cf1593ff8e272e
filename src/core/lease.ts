/**
 * Keeping a claim's lease while its handlers run. The lease (`leaseMs`) is what stops another attempt
 * from running a delivery at the same time; a handler that outlives it (a slow hand-off job, a
 * direct-mode handler past its deadline that ignores its `signal`) would otherwise be overlapped by
 * the next attempt. So the lease is extended (`DedupStore.extend`) every third of `leaseMs` from the
 * claim until the handlers settle, and a store that answers `false` (the lease ended and the key may
 * be someone else's) is reported as `lease_lost` at once.
 *
 * A store without `extend` keeps the old bound: the lease must outlive the handler budget.
 */
import type { Clock } from '../shared/clock.js';
import type { ClaimSettings } from './claims.js';
import { clockSchedules } from './deadline.js';
import { describeError, emit, type LogFields, type Logger } from './logger.js';

/** What keeping a lease needs from the receiver. */
export interface LeaseSettings extends ClaimSettings {
  readonly clock: Clock;
  readonly logger: Logger | undefined;
}

const NOTHING = (): void => {};

/**
 * `fire` after `ms` on `clock`'s timers (a virtual clock awaits the promise it returns), or on an
 * unref'd runtime timer; returns the canceller.
 */
function later(clock: Clock, ms: number, fire: () => Promise<void>): () => void {
  if (clockSchedules(clock)) {
    const handle = clock.setTimeout!(fire, ms);
    return () => clock.clearTimeout!(handle);
  }
  // Unref'd: a handler that waits on nothing must not be kept alive by its lease.
  const timer = setTimeout(() => void fire(), ms);
  (timer as { unref?: () => void }).unref?.();
  return () => clearTimeout(timer);
}

/**
 * Extends the lease of `token` on `key` until the returned function is called. `lost` is called once
 * if the store refuses an extension (the token no longer owns the key); a failed call is logged and
 * tried again at the next turn (the lease still has two thirds of `leaseMs` left at each turn).
 */
export function keepLease(
  settings: LeaseSettings,
  key: string,
  token: string,
  fields: LogFields,
  lost: () => void,
): () => void {
  const { store, leaseMs, storeTimeoutMs, clock, logger } = settings;
  if (typeof store.extend !== 'function') return NOTHING;
  const every = Math.max(1, Math.floor(leaseMs / 3));
  let stopped = false;
  let cancel = NOTHING;
  const turn = async (): Promise<void> => {
    let extended: boolean | undefined;
    try {
      extended = await store.extend!(key, token, { leaseMs, timeoutMs: storeTimeoutMs });
    } catch (error) {
      if (!stopped)
        emit(logger, 'warn', 'dedup store extend failed; trying again', {
          ...fields,
          error: describeError(error),
        });
    }
    // Settled meanwhile: a `false` now only means the completion or release went first.
    if (stopped) return;
    if (extended === false) {
      stopped = true;
      lost();
      return;
    }
    cancel = later(clock, every, turn);
  };
  cancel = later(clock, every, turn);
  return () => {
    stopped = true;
    cancel();
  };
}
