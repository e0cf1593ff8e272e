/**
 * One timer per deadline, on the receiver's clock when it schedules (a virtual clock in tests), else
 * on the runtime's timers. Every wait on user code (handlers, `onInvalid` hooks) goes through it, so
 * nothing the user supplies can hold an answer past the deadline, and a test can move past it on
 * virtual time.
 */
import type { Clock } from '../shared/clock.js';

/** Cancels a {@link startDeadline} timer; a no-op once it fired. */
export type CancelDeadline = () => void;

/** Whether `clock` brings its own timers (both methods, so a timer it starts can be cancelled). */
export function clockSchedules(clock: Clock): boolean {
  return typeof clock.setTimeout === 'function' && typeof clock.clearTimeout === 'function';
}

/** Calls `expire` after `ms` on `clock`'s timers, or the runtime's when the clock has none. */
export function startDeadline(clock: Clock, ms: number, expire: () => void): CancelDeadline {
  if (clockSchedules(clock)) {
    const handle = clock.setTimeout!(expire, ms);
    return () => clock.clearTimeout!(handle);
  }
  const timer = setTimeout(expire, ms);
  return () => clearTimeout(timer);
}

/**
 * `work`, or `timedOut` once `ms` passed on `clock`, whichever comes first. `work` keeps running
 * after the deadline; the caller decides what its late result means.
 */
export function withinDeadline<T, U>(
  clock: Clock,
  ms: number,
  work: Promise<T>,
  timedOut: () => U,
): Promise<T | U> {
  return new Promise<T | U>((resolve) => {
    const cancel = startDeadline(clock, ms, () => resolve(timedOut()));
    work.then((value) => {
      cancel();
      resolve(value);
    });
  });
}
