/**
 * One deadline per delivery. Every wait of a delivery (the dedup store, the handlers, the `onInvalid`
 * hooks) is raced against it, so nothing a user or a store supplies can hold the answer past it. A
 * processed delivery's deadline is an entry of the receiver's scheduler (timers.ts,
 * process-delivery.ts); {@link createDeadline} is the stand-alone one of the `onInvalid` hooks, on
 * the receiver's clock when it schedules (a virtual clock in tests), else on the runtime's timers:
 * one timer at most, started by the first wait and cleared when the delivery ends.
 */
import type { Clock } from '../shared/clock.js';
import { clockSchedules } from '../shared/scheduler.js';

/** What {@link Deadline.race} resolves with once the deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** The deadline of one delivery. */
export interface Deadline {
  /** Epoch ms on the receiver's clock. */
  readonly at: number;
  /** Milliseconds left (0 once it passed). */
  remainingMs(): number;
  /** `work`'s value, or {@link TIMED_OUT} once the deadline passed; `work` goes on either way. */
  race<T>(work: Promise<T>): Promise<T | typeof TIMED_OUT>;
  /** Clears the timer; later races wait for their work alone. */
  cancel(): void;
}

/** Calls `fire` after `ms` on `clock`'s timers, or the runtime's; returns the canceller. */
function startTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clockSchedules(clock)) {
    const handle = clock.setTimeout!(fire, ms);
    return () => clock.clearTimeout!(handle);
  }
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
}

/** The deadline at `at` (epoch ms on `clock`). */
export function createDeadline(clock: Clock, at: number): Deadline {
  let expired: Promise<typeof TIMED_OUT> | undefined;
  let stop: (() => void) | undefined;
  let cancelled = false;
  return {
    at,
    remainingMs: () => Math.max(0, at - clock.now()),
    race(work) {
      if (cancelled) return work;
      expired ??= new Promise((resolve) => {
        stop = startTimer(clock, Math.max(0, at - clock.now()), () => resolve(TIMED_OUT));
      });
      return Promise.race([work, expired]);
    },
    cancel() {
      cancelled = true;
      stop?.();
    },
  };
}
