/**
 * A delivery's calls to the dedup store, each under the receiver's one bound (`storeTimeoutMs`,
 * passed with every call as `callTimeoutMs`; the stores apply it themselves): claim, complete or
 * release, extend, abandon. The delivery's deadline is the last bound for a store that ignores it; the
 * receiver's own in-process memory store answers at once and is never raced.
 *
 * A claim that timed out or failed (the store stalled, the client's own timeout fired, the connection
 * dropped) may still run later: queued behind a paused Redis, or read by a stopped Postgres backend
 * when it resumes. It would then hold a lease nobody holds, and the sender's quick retries
 * (crm-service §6 rule 5: 1 s, then 2 s later) would all get 409: the delivery would be lost. So the
 * receiver chooses the claim's token before sending it, and on any failure tells the store to abandon
 * that token (DedupStore.abandon), which works in whichever order the claim and the abandon arrive.
 */
import { createToken } from '../../dedup/token.js';
import type { ClaimResult, DedupStore } from '../../dedup/types.js';
import { isWebhookError, WebhookError } from '../../shared/errors.js';
import { type Deadline, TIMED_OUT } from '../deadline.js';

/** What the store calls of one receiver need. */
export interface StoreSettings {
  readonly store: DedupStore;
  /** The receiver's own memory store: answers before the call returns, never raced. */
  readonly storeInProcess: boolean;
  readonly leaseMs: number;
  readonly ttlMs: number;
  /** The one bound of every store call (`callTimeoutMs` of each call). */
  readonly storeTimeoutMs: number;
}

/** How a claim ended: the store's answer, or the error why there is none (never rejects). */
export type Claim = ClaimResult | { readonly status: 'failed'; readonly error: unknown };

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

function invalidOptions(error: unknown): boolean {
  return isWebhookError(error) && error.code === 'options_invalid';
}

/**
 * Calls `store.abandon(key, token)` until it settled twice (see CONFIRM_AFTER_MS), with backoff
 * between failures, and gives up once the waits add up to `leaseMs`: a claim that ran by then has its
 * lease ending anyway. Timers are unref'd: they never keep a process alive.
 */
export function abandonClaim(settings: StoreSettings, key: string, token: string): void {
  const { store, leaseMs, storeTimeoutMs } = settings;
  if (typeof store.abandon !== 'function') return;
  const canRetry = retrying < MAX_RETRYING;
  if (canRetry) retrying++;
  let settled = 0;
  let delay = FIRST_RETRY_MS;
  let waited = 0;
  const attempt = async (): Promise<void> => {
    let error: unknown;
    try {
      if (await store.abandon!(key, token, { leaseMs, callTimeoutMs: storeTimeoutMs })) settled++;
    } catch (thrown) {
      error = thrown;
    }
    const wait = settled === 1 ? CONFIRM_AFTER_MS : delay;
    if (!canRetry || settled >= 2 || waited + wait > leaseMs || invalidOptions(error)) {
      if (canRetry) retrying--;
      return;
    }
    if (settled === 0) delay *= 2;
    waited += wait;
    setTimeout(attempt, wait).unref?.();
  };
  void attempt();
}

/**
 * Claims `key` within the store's bound and the delivery's `deadline`. The receiver chooses the token
 * (createToken), so a claim whose answer it never sees is abandoned in the background; on a store
 * without `abandon`, a claim that succeeds after it was given up is released again instead (that
 * covers a late answer, not a lost one). Never rejects.
 */
export async function claim(settings: StoreSettings, key: string, deadline: Deadline): Promise<Claim> {
  const { store, leaseMs, storeTimeoutMs } = settings;
  const token = createToken();
  let gaveUp = false;
  try {
    const call = store.claim(key, { leaseMs, token, callTimeoutMs: storeTimeoutMs });
    if (typeof store.abandon !== 'function') {
      void call.then(
        (late) => {
          if (gaveUp && late.status === 'claimed')
            store.release(key, late.token, { callTimeoutMs: storeTimeoutMs }).catch(() => undefined);
        },
        () => undefined,
      );
    }
    const answer = settings.storeInProcess ? await call : await deadline.race(call);
    if (answer !== TIMED_OUT) return answer;
    throw new WebhookError(
      'store_unavailable',
      `The dedup store did not answer the claim before the delivery's deadline (${deadline.at}).`,
    );
  } catch (error) {
    gaveUp = true;
    if (!invalidOptions(error)) abandonClaim(settings, key, token);
    return { status: 'failed', error };
  }
}

/**
 * Completes (`success`) or releases the claim of `token`: `true` once recorded, `false` when the
 * lease had ended (the store refused a write it no longer fences), or the error. A release that
 * failed may not have run: the claim would hold until its lease ends and the CRM service's quick
 * retries (§6 rule 5: 1 s, 2 s) would get 409, so its token is abandoned in the background, which
 * drops the lease whether the release ran or not.
 */
export async function settleClaim(
  settings: StoreSettings,
  key: string,
  token: string,
  success: boolean,
): Promise<boolean | { error: unknown }> {
  const { store, ttlMs, storeTimeoutMs } = settings;
  try {
    return success
      ? await store.complete(key, token, { ttlMs, callTimeoutMs: storeTimeoutMs })
      : await store.release(key, token, { callTimeoutMs: storeTimeoutMs });
  } catch (error) {
    if (!success) abandonClaim(settings, key, token);
    return { error };
  }
}

/** Milliseconds between two extensions of a lease of `leaseMs`: a third of it. */
export function leaseTurnMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 3));
}

/**
 * One extension of the lease of `token` on `key`: `false` when the store refused it (the token no
 * longer owns the key), `true` when extended, the error when the call failed (the next turn tries
 * again: the lease still has two thirds of `leaseMs` left).
 */
export async function extendLease(
  settings: StoreSettings,
  key: string,
  token: string,
): Promise<boolean | { error: unknown }> {
  const { store, leaseMs, storeTimeoutMs } = settings;
  try {
    return await store.extend!(key, token, { leaseMs, callTimeoutMs: storeTimeoutMs });
  } catch (error) {
    return { error };
  }
}
