/**
 * Dedup store calls bounded in time. A store that hangs (a Redis client queueing commands while
 * disconnected, a saturated Postgres pool) must not hold the request past the sender's 10 s: after
 * `timeoutMs` the call counts as failed and the receiver fails closed (503, no handler runs).
 * A `timeoutMs` of 0 means no bound (the receiver's own in-process memory store cannot hang).
 * The receiver owns this deadline: it passes `timeoutMs` with every call (`StoreCallOptions`), so a
 * store with a bound of its own (Redis, Postgres) uses the receiver's instead; the timer here covers
 * stores that ignore the option.
 * Claims live in claim-within.ts: a claim whose answer was not seen must also be abandoned.
 */
import type { DedupStore } from '../dedup/types.js';

/** A store call that failed or timed out; `cause` is what the store threw, if anything. */
export class StoreCallFailed {
  constructor(
    readonly operation: 'claim' | 'complete' | 'release' | 'abandon',
    readonly cause: unknown,
  ) {}
}

type Operation = StoreCallFailed['operation'];

/** The unbounded call, with a failure turned into a value; one promise, no wrapper chain. */
export async function direct<T>(run: () => Promise<T>, operation: Operation): Promise<T | StoreCallFailed> {
  try {
    return await run();
  } catch (error) {
    return new StoreCallFailed(operation, error);
  }
}

/** `run()` settled within `timeoutMs` (0 = no bound), a failure or the timeout turned into a value. */
export function bounded<T>(
  run: () => Promise<T>,
  timeoutMs: number,
  operation: Operation,
): Promise<T | StoreCallFailed> {
  if (timeoutMs === 0) return direct(run, operation);
  let pending: Promise<T>;
  try {
    pending = run();
  } catch (error) {
    return Promise.resolve(new StoreCallFailed(operation, error));
  }
  const fail = (error: unknown) => new StoreCallFailed(operation, error);
  // One promise and one timer, no Promise.race: this runs on every request.
  return new Promise<T | StoreCallFailed>((resolve) => {
    const timer = setTimeout(
      () => resolve(fail(new Error(`dedup store ${operation} did not answer within ${timeoutMs} ms`))),
      timeoutMs,
    );
    Promise.resolve(pending).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve(fail(error));
      },
    );
  });
}

/** `store.complete` with a time bound: `true`, `false` (fenced: the lease was lost) or a failure. */
export function completeWithin(
  store: DedupStore,
  key: string,
  token: string,
  ttlMs: number,
  timeoutMs: number,
): Promise<boolean | StoreCallFailed> {
  return bounded(() => store.complete(key, token, { ttlMs, timeoutMs }), timeoutMs, 'complete');
}

/** `store.release` with a time bound: `true`, `false` (fenced) or a failure. */
export function releaseWithin(
  store: DedupStore,
  key: string,
  token: string,
  timeoutMs: number,
): Promise<boolean | StoreCallFailed> {
  return bounded(() => store.release(key, token, { timeoutMs }), timeoutMs, 'release');
}
