/**
 * The receiver's calls to its dedup store: a claim made harmless when its answer is not seen (the
 * settle after the handlers is in process-delivery.ts). Each call carries the receiver's
 * `storeTimeoutMs`, which the store applies itself (the shipped stores bound every call with it); the
 * receiver adds no timer of its own per call, only the delivery's deadline (deadline.ts) as the last
 * bound for a store that ignores it.
 *
 * A claim that timed out or failed (the store stalled, the client's own timeout fired, the connection
 * dropped) may still run later: queued behind a paused Redis, or read by a stopped Postgres backend
 * when it resumes. It would then hold a lease nobody holds, and the sender's quick retries
 * (crm-service §6 rule 5: 1 s, then 2 s later) would all get 409: the delivery would be lost. So the
 * receiver chooses the claim's token before sending it, and on any failure tells the store to abandon
 * that token (DedupStore.abandon), which works in whichever order the claim and the abandon arrive.
 */
import type { ClaimResult, DedupStore } from '../dedup/types.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import type { Deadline } from './deadline.js';

/** How the receiver's claim ended: the store's answer, or why there is none. */
export type Claim = ClaimResult | { status: 'failed'; error: unknown };

/** What the store calls of one receiver need. */
export interface ClaimSettings {
  readonly store: DedupStore;
  readonly leaseMs: number;
  readonly ttlMs: number;
  /** Passed with every call: the store's own bound. */
  readonly storeTimeoutMs: number;
}

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
export function abandonClaim(settings: ClaimSettings, key: string, token: string): void {
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
 * Sends the claim of `key` with `token` (chosen by the caller, createToken in dedup/token.ts), within
 * the store's bound; a store that throws instead of rejecting comes back as a rejection. The caller
 * waits for the answer (raced against the delivery's deadline unless the store is the receiver's own)
 * and calls {@link giveUpClaim} when it did not get one. On a store without `abandon`, a claim that
 * succeeds after the caller gave up (`attempt.gaveUp`) is released again instead (that covers a late
 * answer, not a lost one).
 */
export function sendClaim(
  settings: ClaimSettings,
  key: string,
  token: string,
  attempt: { readonly gaveUp: boolean },
): Promise<ClaimResult> {
  const { store, leaseMs, storeTimeoutMs } = settings;
  let call: Promise<ClaimResult>;
  try {
    call = store.claim(key, { leaseMs, token, callTimeoutMs: storeTimeoutMs });
  } catch (error) {
    return Promise.reject(error);
  }
  if (typeof store.abandon !== 'function') {
    void call.then(
      (late) => {
        if (attempt.gaveUp && late.status === 'claimed')
          store.release(key, late.token, { callTimeoutMs: storeTimeoutMs }).catch(() => undefined);
      },
      () => undefined,
    );
  }
  return call;
}

/** The claim of `token` failed or was not answered: abandon it in the background (see above). */
export function giveUpClaim(settings: ClaimSettings, key: string, token: string, error: unknown): void {
  if (!invalidOptions(error)) abandonClaim(settings, key, token);
}

/** The error of a claim not answered before the delivery's deadline. */
export function claimNotAnswered(deadline: Deadline): WebhookError {
  return new WebhookError(
    'store_unavailable',
    `The dedup store did not answer the claim before the delivery's deadline (${deadline.at}).`,
  );
}
