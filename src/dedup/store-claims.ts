/**
 * The claim port over any {@link DedupStore} (the public protocol: a user's own store too), each call
 * under the receiver's one bound (`storeTimeoutMs`, passed with every call as `callTimeoutMs`; the
 * stores apply it themselves) and the claim also raced against the delivery's deadline, the last bound
 * of a store that ignores it.
 *
 * A claim that timed out or failed (the store stalled, the client's own timeout fired, the connection
 * dropped) may still run later: queued behind a paused Redis, or read by a stopped Postgres backend
 * when it resumes. It would then hold a lease nobody holds, and the sender's quick retries
 * (crm-service §6 rule 5: 1 s, then 2 s later) would all get 409: the delivery would be lost. So the
 * token is chosen here before the claim is sent (createToken), and on any failure the store is told
 * to abandon that token (DedupStore.abandon), which works in whichever order the claim and the abandon
 * arrive. A store without `abandon` gets a claim that succeeded after it was given up released instead
 * (that covers a late answer, not a lost one).
 */
import { isWebhookError, WebhookError } from '../shared/errors.js';
import type {
  AsyncClaims,
  AsyncHeld,
  ClaimAnswer,
  ClaimDeadline,
  Claims,
  ClaimTerms,
  Settled,
} from './claims.js';
import { DUPLICATE } from './claims.js';
import { memoryClaimsOf } from './memory-store.js';
import { createToken } from './token.js';
import type { DedupStore } from './types.js';

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
function abandonClaim(store: DedupStore, terms: ClaimTerms, key: string, token: string): void {
  if (typeof store.abandon !== 'function') return;
  const { leaseMs, callTimeoutMs } = terms;
  const canRetry = retrying < MAX_RETRYING;
  if (canRetry) retrying++;
  let settled = 0;
  let delay = FIRST_RETRY_MS;
  let waited = 0;
  const attempt = async (): Promise<void> => {
    let error: unknown;
    try {
      if (await store.abandon!(key, token, { leaseMs, callTimeoutMs })) settled++;
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

/** A store call's answer as a {@link Settled}; never rejects. */
async function settledOf(call: () => Promise<boolean>, failed?: () => void): Promise<Settled> {
  try {
    return await call();
  } catch (error) {
    failed?.();
    return { error };
  }
}

/** The claim `token` holds on `key` of `store`. */
function heldOn(
  store: DedupStore,
  terms: ClaimTerms,
  key: string,
  token: string,
  leaseEndsAt: number,
): AsyncHeld & { readonly status: 'claimed' } {
  const { leaseMs, ttlMs, callTimeoutMs } = terms;
  const held: AsyncHeld & { status: 'claimed' } = {
    status: 'claimed',
    sync: false,
    token,
    leaseEndsAt,
    complete: () => settledOf(() => store.complete(key, token, { ttlMs, callTimeoutMs })),
    // A release that failed may not have run: the claim would hold until its lease ends and the CRM
    // service's quick retries (§6 rule 5: 1 s, 2 s) would get 409, so its token is abandoned in the
    // background, which drops the lease whether the release ran or not.
    release: () =>
      settledOf(
        () => store.release(key, token, { callTimeoutMs }),
        () => abandonClaim(store, terms, key, token),
      ),
  };
  if (typeof store.extend === 'function')
    held.extend = () => settledOf(() => store.extend!(key, token, { leaseMs, callTimeoutMs }));
  return held;
}

/**
 * The claims of a receiver over `store`: each claim with a token chosen here, within the store's bound
 * and the delivery's deadline, abandoned in the background when its answer was not seen.
 */
export function claimsOver(store: DedupStore, terms: ClaimTerms): AsyncClaims {
  const { leaseMs, callTimeoutMs } = terms;
  const abandons = typeof store.abandon === 'function';

  async function claim(key: string, deadline: ClaimDeadline): Promise<ClaimAnswer<AsyncHeld>> {
    const token = createToken();
    let gaveUp = false;
    try {
      const call = store.claim(key, { leaseMs, token, callTimeoutMs });
      if (!abandons) {
        void call.then(
          (late) => {
            if (gaveUp && late.status === 'claimed')
              store.release(key, late.token, { callTimeoutMs }).catch(() => undefined);
          },
          () => undefined,
        );
      }
      const answer = await deadline.race(call);
      if (typeof answer === 'symbol') {
        throw new WebhookError(
          'store_unavailable',
          `The dedup store did not answer the claim before the delivery's deadline (${deadline.at}).`,
        );
      }
      if (answer.status === 'completed') return DUPLICATE;
      if (answer.status === 'in_progress') return { status: 'busy', leaseEndsAt: answer.leaseEndsAt };
      return heldOn(store, terms, key, answer.token, answer.leaseEndsAt);
    } catch (error) {
      gaveUp = true;
      if (!invalidOptions(error)) abandonClaim(store, terms, key, token);
      return { status: 'failed', error };
    }
  }

  return { sync: false, claim };
}

/**
 * The claims a receiver runs with over `store`: the memory store's own, which answer at once
 * (memory-claims.ts), or {@link claimsOver} the store for any other.
 */
export function claimsOf(store: DedupStore, terms: ClaimTerms): Claims {
  return memoryClaimsOf(store, terms) ?? claimsOver(store, terms);
}
