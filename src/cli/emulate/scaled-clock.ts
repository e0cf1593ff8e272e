/**
 * The emulator's clock: the wall clock, or the wall clock sped up by `speed` (`--speed 60` makes the
 * email service's 1- and 2-minute retries happen after 1 and 2 seconds). Time starts at the real
 * time the emulator started, then runs `speed` times faster; timers wait `ms / speed` real ms.
 */
import type { EmitterClock } from '../../testing/clock/types.js';

/** A {@link EmitterClock} that runs `speed` times as fast as the wall clock, and can be stopped. */
export function createScaledClock(
  speed: number,
  wallNow: () => number = Date.now,
): EmitterClock & { stop(): void; wall(ms: number): number } {
  const origin = wallNow();
  const handles = new Map<number, ReturnType<typeof setTimeout>>();
  let nextId = 1;
  let stopped = false;
  const real = (ms: number) => Math.max(0, ms / speed);
  function schedule(callback: () => unknown, ms: number): number {
    const id = nextId++;
    // Stopped: nothing new is scheduled (an attempt that ends now schedules no retry).
    if (stopped) return id;
    handles.set(
      id,
      setTimeout(() => {
        handles.delete(id);
        void callback();
      }, real(ms)),
    );
    return id;
  }
  return {
    now: () => Math.round(origin + (wallNow() - origin) * speed),
    /** The wall-clock time of an emulated time `ms` (past or future). */
    wall: (ms) => Math.round(origin + (ms - origin) / speed),
    setTimeout: schedule,
    clearTimeout(id) {
      clearTimeout(handles.get(id));
      handles.delete(id);
    },
    // On the same timers, so stop() ends the waits too (they then never resolve).
    sleep: (ms) => new Promise((resolve) => void schedule(resolve, ms)),
    track: (work) => work,
    /** Cancels every pending timer (the emitters' scheduled retries) and refuses new ones. */
    stop() {
      stopped = true;
      for (const handle of handles.values()) clearTimeout(handle);
      handles.clear();
    },
  };
}
