import type { EmitterClock } from './types.js';

/**
 * The wall clock as a {@link EmitterClock}: real timers, real waiting. For demos and for running
 * an emitter against a staging receiver in real time.
 *
 * @example
 * ```ts
 * import { createMailEmitter, createRealClock } from '@svc/webhooks/testing';
 *
 * const emitter = createMailEmitter({ clock: createRealClock(), allowPrivateNetworks: true });
 * ```
 */
export function createRealClock(): EmitterClock {
  const handles = new Map<number, ReturnType<typeof setTimeout>>();
  let nextId = 1;
  return {
    now: () => Date.now(),
    setTimeout(callback, ms) {
      const id = nextId++;
      handles.set(
        id,
        setTimeout(() => {
          handles.delete(id);
          void callback();
        }, ms),
      );
      return id;
    },
    clearTimeout(id) {
      clearTimeout(handles.get(id));
      handles.delete(id);
    },
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    track: (work) => work,
  };
}
