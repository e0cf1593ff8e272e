/**
 * A timer handle returned by {@link EmitterClock.setTimeout}.
 *
 * @example
 * ```ts
 * const id: TimerId = clock.setTimeout(() => {}, 1_000);
 * clock.clearTimeout(id);
 * ```
 */
export type TimerId = number;

/**
 * The time source and scheduler every emitter runs on. {@link createVirtualClock} moves only when
 * told to; {@link createRealClock} follows the wall clock. Every one is also a receiver's `Clock`
 * (`now`, `setTimeout`, `clearTimeout`), so a receiver can share it.
 *
 * @example
 * ```ts
 * import { createMailEmitter, createRealClock, type EmitterClock } from '@svc/webhooks/testing';
 *
 * const clock: EmitterClock = createRealClock();
 * const emitter = createMailEmitter({ clock, allowPrivateNetworks: true });
 * ```
 */
export interface EmitterClock {
  /** Epoch milliseconds. */
  now(): number;
  /** Runs `callback` after `ms`; an async callback's work is awaited by a virtual clock's `advance`. */
  setTimeout(callback: () => unknown, ms: number): TimerId;
  /** Cancels a timer that has not fired yet. */
  clearTimeout(id: TimerId): void;
  /** Resolves after `ms` on this clock. Handlers that wait on a virtual clock must wait through it. */
  sleep(ms: number): Promise<void>;
  /**
   * Registers work that runs outside a timer (an emitter's first attempt), so that a virtual clock's
   * `advance` waits for it before moving time. Returns the same promise.
   */
  track<T>(work: Promise<T>): Promise<T>;
}
