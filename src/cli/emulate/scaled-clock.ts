/**
 * The emulator's clock: the wall clock, or the wall clock sped up by `speed` (`--speed 60` makes the
 * email service's 1- and 2-minute retries happen after 1 and 2 seconds). Time starts at the real
 * time the emulator started, then runs `speed` times faster; timers wait `ms / speed` real ms.
 */
import type { EmitterClock } from '../../testing/clock/types.js';

/** A {@link EmitterClock} that runs `speed` times as fast as the wall clock. */
export function createScaledClock(speed: number, wallNow: () => number = Date.now): EmitterClock {
  const origin = wallNow();
  const handles = new Map<number, ReturnType<typeof setTimeout>>();
  let nextId = 1;
  const real = (ms: number) => Math.max(0, ms / speed);
  return {
    now: () => Math.round(origin + (wallNow() - origin) * speed),
    setTimeout(callback, ms) {
      const id = nextId++;
      handles.set(
        id,
        setTimeout(() => {
          handles.delete(id);
          void callback();
        }, real(ms)),
      );
      return id;
    },
    clearTimeout(id) {
      clearTimeout(handles.get(id));
      handles.delete(id);
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, real(ms))),
    track: (work) => work,
  };
}
