/**
 * The one bound of a hand-off write (a queue engine's enqueue, the database inbox's insert): counted
 * from the delivery's receipt, its body read on the receiver's clock, not from the write's start.
 * Time the event loop spent elsewhere before the write (other requests, a long verify) is inside it,
 * and so are the engine client's own retries and backoff, aborted with it (docs/handoff.md "The
 * enqueue bound"). Nothing is acknowledged that was not persisted: past the bound the sender gets
 * 503 and retries (email-service §6 rule 4, crm-service §6 rule 5).
 */
import type { Clock } from '../shared/clock.js';
import { createDeadline, type Deadline, TIMED_OUT } from './deadline.js';

const late = (timeoutMs: number) =>
  new Error(`hand-off enqueue did not answer within ${timeoutMs} ms of the delivery's receipt`);

/** `pending`'s value, or the late error once `deadline` passed (`onLate` gets it first). */
async function withinBound<T>(
  deadline: Deadline,
  timeoutMs: number,
  pending: Promise<T>,
  onLate?: (error: Error) => void,
): Promise<T> {
  let result: T | typeof TIMED_OUT;
  try {
    // Past the bound the sender gets 503 even if the write lands later: its retry then finds it (the
    // engine's uniqueness on the dedup key) and is acknowledged as a duplicate.
    result = await deadline.race(pending);
  } finally {
    deadline.cancel();
  }
  if (result !== TIMED_OUT) return result;
  const error = late(timeoutMs);
  onLate?.(error);
  throw error;
}

/**
 * `write(signal)`'s value; its rejection; or, once `timeoutMs` passed since `receivedAt`, a rejection
 * with the late error, `signal` aborted with it. A bound already past (the loop was blocked since the
 * body was read) rejects without starting the write. A wall clock stepped back since the receipt does
 * not stretch it past `timeoutMs` from now.
 */
export async function writeWithinBound<T>(
  clock: Clock,
  receivedAt: number,
  timeoutMs: number,
  write: (signal: AbortSignal) => Promise<T> | T,
): Promise<T> {
  const deadline = createDeadline(clock, boundAt(clock, receivedAt, timeoutMs));
  const controller = new AbortController();
  let pending: Promise<T>;
  try {
    pending = Promise.resolve(write(controller.signal));
  } catch (error) {
    pending = Promise.reject(error);
  }
  return withinBound(deadline, timeoutMs, pending, (error) => controller.abort(error));
}

/**
 * The same bound for a write that takes no signal and may finish at once (the database inbox's insert:
 * SQLite writes synchronously while its file is free), in two steps so a write that finished makes no
 * timer and no promise (it cannot be late: in {@link writeWithinBound} it wins the race).
 * {@link boundAt} first (it throws the late error when the bound passed, the write not started); then,
 * only for a write still pending, {@link pendingWithinBound}.
 */
export function boundAt(clock: Clock, receivedAt: number, timeoutMs: number): number {
  const at = Math.min(receivedAt, clock.now()) + timeoutMs;
  if (at - clock.now() <= 0) throw late(timeoutMs);
  return at;
}

/** `pending`'s value, or the late error once the bound at `at` ({@link boundAt}) passed. */
export function pendingWithinBound<T>(
  clock: Clock,
  at: number,
  timeoutMs: number,
  pending: Promise<T>,
): Promise<T> {
  return withinBound(createDeadline(clock, at), timeoutMs, pending);
}
