/**
 * The receiver's claim: bounded in time like every store call, and made harmless when its answer is
 * not seen. A claim that timed out or failed (the store stalled, the client's own timeout fired, the
 * connection dropped) may still run later: queued behind a paused Redis, or read by a stopped Postgres
 * backend when it resumes. It would then hold a lease nobody holds, and the sender's quick retries
 * (crm-service §6 rule 5: 1 s, then 2 s later) would all get 409: the delivery would be lost. So the
 * receiver chooses the claim's token before sending it, and on any failure tells the store to abandon
 * that token (DedupStore.abandon), which works in whichever order the claim and the abandon arrive.
 */

import { createToken } from '../dedup/token.js';
import type { ClaimResult, DedupStore } from '../dedup/types.js';
import { isWebhookError } from '../shared/errors.js';
import { bounded, direct, StoreCallFailed } from './store-calls.js';

/** Delay before the second abandon when the first did not settle; doubled each time. */
const FIRST_RETRY_MS = 250;
/**
 * A settled abandon is sent once more this much later. Claims and abandons that waited in one stalled
 * server run within moments of each other when it resumes, in any order on a pool of connections: if
 * another attempt's abandon overwrote this token's marker first, this one's late claim may have taken
 * the key, and the confirmation drops it before the sender's next retry (1 s or 2 s later).
 */
const CONFIRM_AFTER_MS = 500;
/** Abandons retried at once, process-wide; past it a failed claim gets one abandon, no retries. */
const MAX_RETRYING = 10_000;
let retrying = 0;

function invalid(error: unknown): boolean {
  return isWebhookError(error) && error.code === 'options_invalid';
}

/**
 * Calls `store.abandon(key, token)` until it settled twice (see CONFIRM_AFTER_MS), with backoff
 * between failures, and gives up once the waits add up to `leaseMs`: a claim that ran by then has its
 * lease ending anyway. Timers are unref'd: they never keep a process alive.
 */
export function abandonClaim(
  store: DedupStore,
  key: string,
  token: string,
  leaseMs: number,
  timeoutMs: number,
): void {
  if (typeof store.abandon !== 'function') return;
  const canRetry = retrying < MAX_RETRYING;
  if (canRetry) retrying++;
  let settled = 0;
  let delay = FIRST_RETRY_MS;
  let waited = 0;
  const attempt = (): void => {
    bounded(() => store.abandon!(key, token, { leaseMs, timeoutMs }), timeoutMs, 'abandon').then((result) => {
      if (result === true) settled++;
      const wait = settled === 1 ? CONFIRM_AFTER_MS : delay;
      const over =
        !canRetry ||
        settled >= 2 ||
        waited + wait > leaseMs ||
        (result instanceof StoreCallFailed && invalid(result.cause));
      if (over) {
        if (canRetry) retrying--;
        return;
      }
      if (settled === 0) delay *= 2;
      waited += wait;
      setTimeout(attempt, wait).unref?.();
    });
  };
  attempt();
}

/**
 * `store.claim` with a time bound (passed to the store too, as the call's `timeoutMs`) and a token
 * chosen here. A claim whose answer was not seen in time
 * (or that failed) is abandoned in the background. On a store without `abandon`, a claim that
 * succeeds after the bound is released again instead (that covers a late answer, not a lost one).
 */
export function claimWithin(
  store: DedupStore,
  key: string,
  leaseMs: number,
  timeoutMs: number,
): Promise<ClaimResult | StoreCallFailed> {
  const token = createToken();
  const canAbandon = typeof store.abandon === 'function';
  let answered = false;
  const call =
    canAbandon || timeoutMs === 0
      ? () => store.claim(key, { leaseMs, token, timeoutMs })
      : () =>
          store.claim(key, { leaseMs, token, timeoutMs }).then((claim) => {
            if (answered && claim.status === 'claimed')
              store.release(key, claim.token, { timeoutMs }).catch(() => undefined);
            return claim;
          });
  const result = timeoutMs === 0 ? direct(call, 'claim') : bounded(call, timeoutMs, 'claim');
  return result.then((claim) => {
    answered = true;
    if (claim instanceof StoreCallFailed && canAbandon && !invalid(claim.cause)) {
      abandonClaim(store, key, token, leaseMs, timeoutMs);
    }
    return claim;
  });
}
