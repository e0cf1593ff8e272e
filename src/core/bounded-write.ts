/**
 * The one bound of a hand-off write (a queue engine's enqueue, the database inbox's insert): counted
 * from the delivery's receipt, its body read on the receiver's clock, not from the write's start.
 * Time the event loop spent elsewhere before the write (other requests, a long verify) is inside it,
 * and so are the engine client's own retries and backoff, aborted with it (docs/handoff.md "The
 * enqueue bound"). Nothing is acknowledged that was not persisted: past the bound the sender gets
 * 503 and retries (email-service §6 rule 4, crm-service §6 rule 5).
 */
import type { Clock } from '../shared/clock.js';
import { createDeadline, TIMED_OUT } from './deadline.js';

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
  const deadline = createDeadline(clock, Math.min(receivedAt, clock.now()) + timeoutMs);
  const late = () =>
    new Error(`hand-off enqueue did not answer within ${timeoutMs} ms of the delivery's receipt`);
  if (deadline.remainingMs() === 0) throw late();
  const controller = new AbortController();
  let pending: Promise<T>;
  try {
    pending = Promise.resolve(write(controller.signal));
  } catch (error) {
    pending = Promise.reject(error);
  }
  let result: T | typeof TIMED_OUT;
  try {
    // Past the bound the sender gets 503 even if the write lands later: its retry then finds it (the
    // engine's uniqueness on the dedup key) and is acknowledged as a duplicate.
    result = await deadline.race(pending);
  } finally {
    deadline.cancel();
  }
  if (result === TIMED_OUT) {
    controller.abort(late());
    throw controller.signal.reason;
  }
  return result;
}
