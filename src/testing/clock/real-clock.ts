import { type Clock, systemClock } from '../../shared/clock.js';

/**
 * The wall clock with every method of a {@link Clock}: real timers, real waiting. For demos and for
 * running an emitter against a staging receiver in real time.
 *
 * @example
 * ```ts
 * import { createMailEmitter, createRealClock } from '@svc/webhooks/testing';
 *
 * const emitter = createMailEmitter({ clock: createRealClock(), allowPrivateNetworks: true });
 * ```
 */
export function createRealClock(): Required<Clock> {
  const { now, setTimeout, clearTimeout, sleep, track } = createScaledClock(1);
  return { now, setTimeout, clearTimeout, sleep, track };
}

/**
 * The wall clock run `speed` times as fast from the moment it is made (the emulator's `--speed 60`
 * makes the email service's 1- and 2-minute retries happen after 1 and 2 seconds): timers wait
 * `ms / speed` real ms. `stop()` cancels every pending timer and refuses new ones; `wall(ms)` is the
 * wall-clock time of an emulated time. At speed 1 it is {@link createRealClock}.
 *
 * A timer's callback runs once `now()` has reached the time it was set for, never before: the
 * runtime's timers count on their own cached, whole-millisecond loop time rather than on `wallNow`,
 * so one may fire while `now()` still reads earlier (by up to `speed` ms per real ms); it then waits
 * out the rest. `from` sets where the clock stands: at emulated time `at` at wall time `wall` (a
 * follower of another scaled clock); by default at the wall's time when it is made.
 */
export function createScaledClock(
  speed: number,
  wallNow: () => number = systemClock.now,
  from?: { at: number; wall: number },
): Required<Clock> & { stop(): void; wall(ms: number): number } {
  const wall0 = from?.wall ?? wallNow();
  const at0 = from?.at ?? wall0;
  const now = speed === 1 && at0 === wall0 ? wallNow : () => Math.round(at0 + (wallNow() - wall0) * speed);
  const handles = new Map<number, ReturnType<typeof setTimeout>>();
  let nextId = 1;
  let stopped = false;
  // Real ms, at most the runtime's longest timer (a longer one would fire at once): the rest is re-armed.
  const real = (ms: number) => Math.min(2_147_483_647, Math.max(0, ms / speed));
  function schedule(callback: () => unknown, ms: number): number {
    const id = nextId++;
    // Stopped: nothing new is scheduled (an attempt that ends now schedules no retry).
    if (stopped) return id;
    const due = now() + ms;
    const arm = (delay: number): void => {
      handles.set(
        id,
        setTimeout(() => {
          const left = due - now();
          if (left > 0 && Number.isFinite(left)) return arm(real(left));
          handles.delete(id);
          void callback();
        }, delay),
      );
    };
    arm(real(ms));
    return id;
  }
  function cancel(id: unknown): void {
    clearTimeout(handles.get(id as number));
    handles.delete(id as number);
  }
  return {
    now,
    wall: (ms) => Math.round(wall0 + (ms - at0) / speed),
    setTimeout: schedule,
    clearTimeout: cancel,
    // On the same timers, so stop() ends the waits too (they then never resolve).
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = (): void => {
          cancel(id);
          reject(signal!.reason);
        };
        const id = schedule(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    track: (work) => work,
    stop() {
      stopped = true;
      for (const handle of handles.values()) clearTimeout(handle);
      handles.clear();
    },
  };
}
