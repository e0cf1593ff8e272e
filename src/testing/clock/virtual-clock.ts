import type { Clock } from '../../shared/clock.js';
import { createTimerHeap, type Timer } from './timer-heap.js';

/**
 * Options of {@link createVirtualClock}.
 *
 * @example
 * ```ts
 * const clock = createVirtualClock({ start: new Date('2025-01-01T00:00:00Z') });
 * ```
 *
 * @example
 * ```ts
 * import type { VirtualClockOptions } from '@svc/webhooks/testing';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: VirtualClockOptions): VirtualClockOptions {
 *   return value;
 * }
 * ```
 */
export interface VirtualClockOptions {
  /** Start time, epoch ms or a `Date`. Default: the wall clock when the clock is created. */
  start?: number | Date;
  /** `runAll()` stops with an error after this many timers (a timer that re-arms itself forever). */
  maxTimers?: number;
}

/**
 * A clock that moves only when told to; see {@link createVirtualClock}.
 *
 * @example
 * ```ts
 * const clock: VirtualClock = createVirtualClock();
 * await emitter.emit('bounced');
 * await clock.runAll(); // every retry, in virtual time
 * ```
 */
export interface VirtualClock extends Required<Clock> {
  /** Moves time forward by `ms`, firing due timers in order and awaiting their async work. */
  advance(ms: number): Promise<void>;
  /** Moves time to `epochMs` (never backwards), like {@link VirtualClock.advance}. */
  advanceTo(epochMs: number): Promise<void>;
  /** Fires every timer, including ones scheduled while running, until none is left. */
  runAll(): Promise<void>;
  /** Waits for tracked work (in-flight attempts) without moving time. */
  settle(): Promise<void>;
  /** Number of timers not yet fired. */
  pending(): number;
}

const noop = (): void => {};
// Timers waiting to enter the heap, at most (a clock nobody advances must not hoard cleared timers).
const FRESH_LIMIT = 1024;

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A virtual clock: `now()` stands still until `advance(ms)`, which fires due timers in time order
 * (equal times in scheduling order) and awaits the work they start, so a whole retry schedule of
 * minutes runs in milliseconds. Work blocked on the clock itself (a handler awaiting `clock.sleep()`)
 * does not stall it: time moves on once every in-flight task is waiting on a sleep.
 *
 * @example
 * ```ts
 * import { createVirtualClock } from '@svc/webhooks/testing';
 *
 * const clock = createVirtualClock({ start: Date.parse('2025-01-01T00:00:00Z') });
 * clock.setTimeout(() => console.log('one minute later', new Date(clock.now()).toISOString()), 60_000);
 * await clock.advance(60_000);
 * ```
 */
export function createVirtualClock(options: VirtualClockOptions = {}): VirtualClock {
  const { start = Date.now(), maxTimers = 1_000_000 } = options;
  let now = typeof start === 'number' ? start : start.getTime();
  let nextId = 1;
  let seq = 0;
  // Live timers by id; the heap may still hold cleared ones (flagged), skipped when they surface.
  const timers = new Map<unknown, Timer>();
  const heap = createTimerHeap();
  // Timers scheduled since the heap was last read: most (an attempt's time limit) are cleared before
  // time moves, so they are dropped here without ever being sifted into the heap.
  const fresh: Timer[] = [];
  // Tracked tasks still running: a count is enough, since completions wake settle() through notify().
  let inflight = 0;
  let sleeping = 0;
  // Resolved whenever a task starts or parks on a sleep, so settle() re-checks without spinning.
  let wake: (() => void) | undefined;
  let changed: Promise<void> | undefined;
  function notify(): void {
    wake?.();
    wake = undefined;
    changed = undefined;
  }
  function nextChange(): Promise<void> {
    changed ??= new Promise<void>((resolve) => {
      wake = resolve;
    });
    return changed;
  }

  function schedule(callback: () => unknown, ms: number): number {
    const id = nextId++;
    const timer: Timer = { id, due: now + Math.max(0, ms), seq: seq++, callback, cancelled: false };
    timers.set(id, timer);
    if (fresh.push(timer) >= FRESH_LIMIT) flush();
    return id;
  }

  // The heap orders by (due, seq), so when a timer enters it does not change the firing order.
  function flush(): void {
    for (const timer of fresh) if (!timer.cancelled) heap.push(timer);
    fresh.length = 0;
  }

  // One reaction per tracked task (settled either way), shared by every task of this clock.
  function finished(): void {
    inflight--;
    notify();
  }

  function track<T>(work: Promise<T>): Promise<T> {
    inflight++;
    void work.then(finished, finished);
    notify();
    return work;
  }

  // Waits until every tracked task settled, or every one still running is parked on a sleep()
  // (it cannot finish before time moves). Real I/O (a fetch to a local server) is awaited.
  async function settle(): Promise<void> {
    for (;;) {
      // Woken when a task starts, finishes or parks on a sleep (one promise, not a race over all tasks).
      while (inflight > sleeping) await nextChange();
      if (inflight === 0) return;
      // Every task may be parked on a sleep, but a sleep can also belong to abandoned work (a handler
      // that timed out): one event-loop turn lets pending continuations finish before time moves.
      await tick();
      if (inflight <= sleeping) return;
    }
  }

  function nextDue(limit: number): Timer | undefined {
    flush();
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (top.cancelled) {
        heap.pop();
        continue;
      }
      if (top.due > limit) return undefined;
      heap.pop();
      return top;
    }
    return undefined;
  }

  async function runUntil(limit: number): Promise<void> {
    let fired = 0;
    // One turn of the event loop lets work started just before (an un-awaited emit) register.
    await tick();
    await settle();
    for (let timer = nextDue(limit); timer; timer = nextDue(limit)) {
      if (++fired > maxTimers)
        throw new Error(`Virtual clock fired more than ${maxTimers} timers; a timer re-arms itself?`);
      timers.delete(timer.id);
      now = Math.max(now, timer.due);
      try {
        const result = timer.callback();
        if (result instanceof Promise) track(result);
      } catch {
        // A throwing timer callback must not stop the clock; the emitter records its own errors.
      }
      await settle();
    }
    if (Number.isFinite(limit)) now = Math.max(now, limit);
  }

  return {
    now: () => now,
    setTimeout: (callback, ms) => schedule(callback, ms),
    clearTimeout: (id) => {
      const timer = timers.get(id);
      if (timer === undefined) return;
      // The heap keeps the timer until it surfaces; release what its callback holds (an attempt's
      // request, controller and promise) now, so cleared timers do not pile up in the old generation.
      timer.cancelled = true;
      timer.callback = noop;
      timers.delete(id);
    },
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        sleeping++;
        notify();
        schedule(() => {
          sleeping--;
          resolve();
          // The sleeper's continuation may be untracked work (a receiver's handler past its deadline,
          // whose late success must complete its claim before the next timer moves time on): one
          // event-loop turn, tracked like a timer's async work, lets its promise chain run first.
          return tick();
        }, ms);
      }),
    track,
    advance: (ms) => runUntil(now + Math.max(0, ms)),
    advanceTo: (epochMs) => runUntil(Math.max(now, epochMs)),
    runAll: () => runUntil(Number.POSITIVE_INFINITY),
    settle,
    pending: () => timers.size,
  };
}
