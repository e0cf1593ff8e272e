/**
 * @module
 * Time, injected: every layer reads `clock.now()` (epoch ms) and never `Date.now()` directly, so tests
 * move time without waiting.
 */

/**
 * The one clock of the package: a source of time in epoch milliseconds, and optionally its timers.
 * Inject one to test expiry without waiting. A clock that also schedules (`setTimeout` and
 * `clearTimeout`, both or neither) runs the receiver's deadlines (handlers, `onInvalid` hooks, a
 * hand-off's `enqueueTimeoutMs`) and lease extensions on its own timers, so a virtual clock can move
 * a slow handler past its deadline without waiting; without them the receiver uses the runtime's
 * timers. The test kit's emitters need every method (`Required<Clock>`): `createVirtualClock()` and
 * `createRealClock()` of `@svc/webhooks/testing` have them all.
 *
 * @example
 * ```ts
 * import { createMailReceiver, type Clock } from '@svc/webhooks';
 * import { createVirtualClock } from '@svc/webhooks/testing';
 *
 * const clock: Clock = createVirtualClock(); // now(), setTimeout(), clearTimeout()
 * const receiver = createMailReceiver({ secret, clock });
 * ```
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /**
   * Runs `callback` after `ms` of this clock's time; returns a handle for {@link Clock.clearTimeout}.
   * A virtual clock's `advance` awaits the promise an async callback returns.
   */
  setTimeout?(callback: () => unknown, ms: number): unknown;
  /** Cancels a timer of {@link Clock.setTimeout} that has not fired. */
  clearTimeout?(handle: unknown): void;
  /**
   * Resolves after `ms` of this clock's time; rejects with `signal.reason` when `signal` aborts first
   * (the management clients' rate-limit waits). Without it, the runtime's timers are used.
   */
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Registers work that runs outside a timer (an emitter's first attempt), so that a virtual clock's
   * `advance` waits for it before moving time. Returns the same promise.
   */
  track?<T>(work: Promise<T>): Promise<T>;
}

/** The wall clock: the default of every `clock` option (the runtime's timers schedule for it). */
export const systemClock: Clock = { now: () => Date.now() };

/** Waits `ms` on `clock` (its own `sleep`, else the runtime's timers); rejects when `signal` aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (clock.sleep) return clock.sleep(ms, signal);
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The clock a delivery is parsed with: `clock` itself, or one frozen at `receivedAt` when given (a
 * hand-off worker parses a job as at its receipt, so the opt-in `maxEventAgeMs` check gives the
 * answer it gave at the receiver, however long the job queued).
 */
export function atReceipt(clock: Clock, receivedAt: number | undefined): Clock {
  return receivedAt === undefined ? clock : { now: () => receivedAt };
}
