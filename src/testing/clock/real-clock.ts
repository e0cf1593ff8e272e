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
 */
export function createScaledClock(
  speed: number,
  wallNow: () => number = systemClock.now,
): Required<Clock> & { stop(): void; wall(ms: number): number } {
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
  function cancel(id: unknown): void {
    clearTimeout(handles.get(id as number));
    handles.delete(id as number);
  }
  return {
    now: speed === 1 ? wallNow : () => Math.round(origin + (wallNow() - origin) * speed),
    wall: (ms) => Math.round(origin + (ms - origin) / speed),
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
