/**
 * One timer per receiver for the deadlines and lease turns of all its deliveries. A delivery is a
 * {@link Due} linked into the receiver's {@link Scheduler} (a list sorted by due time) while it waits;
 * the scheduler keeps ONE timer armed for the earliest entry, on the receiver's clock when it
 * schedules (a virtual clock in tests), else on an unref'd runtime timer that never keeps a process
 * alive. Adding an entry with the same budget as the ones before it (the common case: every delivery
 * of a receiver gets `now + timeoutMs`) appends it in constant time; removing one unlinks it in
 * constant time. An idle receiver holds no clock timer, and at most one runtime timer that fires once
 * and re-arms for nothing.
 */
import type { Clock } from './clock.js';

/** Whether `clock` brings its own timers (both methods, so a timer it starts can be cancelled). */
export function clockSchedules(clock: Clock): boolean {
  return typeof clock.setTimeout === 'function' && typeof clock.clearTimeout === 'function';
}

/**
 * An entry of a {@link Scheduler}: an object with these fields (start them at 0, `undefined`,
 * `undefined`, `false`) and `fire`. An interface rather than a base class: a delivery's entry is built
 * per request, and a derived class's constructor costs more than fields of its own.
 */
export interface Due {
  /** When it fires (epoch ms on the scheduler's clock); set by {@link Scheduler.add}. */
  due: number;
  /** Links of the scheduler's list; `queued` while linked. */
  prev: Due | undefined;
  next: Due | undefined;
  queued: boolean;
  /**
   * Called once when `due` passed (the entry is already unlinked; add it again for another turn).
   * A returned promise is handed to the clock's timer, so a virtual clock's `advance` awaits it.
   */
  fire(now: number): Promise<unknown> | undefined;
}

/** The timer of one receiver's deliveries. */
export class Scheduler {
  readonly #clock: Clock;
  readonly #ownTimers: boolean;
  #head: Due | undefined = undefined;
  #tail: Due | undefined = undefined;
  /** Due time the armed timer was set for; `Infinity` when none is armed. */
  #armedAt = Number.POSITIVE_INFINITY;
  #handle: unknown = undefined;
  /** The due time of the latest timer that fired. */
  #passed = Number.NEGATIVE_INFINITY;
  readonly #onTimer: () => Promise<unknown> | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#ownTimers = clockSchedules(clock);
    this.#onTimer = () => this.#run();
  }

  /** Whether nothing waits (and so no timer is armed). */
  get idle(): boolean {
    return this.#head === undefined;
  }

  /** Links `entry` to fire at `due` (moving it if it was linked already). */
  add(entry: Due, due: number): void {
    if (entry.queued) this.#unlink(entry);
    entry.due = due;
    entry.queued = true;
    // Walk back from the tail: entries mostly arrive in due order, so this stops at once.
    let before = this.#tail;
    while (before !== undefined && before.due > due) before = before.prev;
    const after = before === undefined ? this.#head : before.next;
    entry.prev = before;
    entry.next = after;
    if (before === undefined) this.#head = entry;
    else before.next = entry;
    if (after === undefined) this.#tail = entry;
    else after.prev = entry;
    if (due < this.#armedAt) this.#arm(due);
  }

  /**
   * Unlinks `entry` if linked. An earlier entry gone leaves the timer early: it fires, finds nothing
   * due and re-arms for the next one. Once nothing waits, a clock's own timer is cleared; a runtime
   * timer is left to fire once and stop: it is unref'd, so it keeps no process alive, and the next
   * delivery (due later) needs no timer of its own, where clearing and arming one per delivery
   * costs a runtime timer list each time.
   */
  remove(entry: Due): void {
    if (!entry.queued) return;
    this.#unlink(entry);
    if (this.#head === undefined && this.#ownTimers) this.#disarm();
  }

  #unlink(entry: Due): void {
    const { prev, next } = entry;
    if (prev === undefined) this.#head = next;
    else prev.next = next;
    if (next === undefined) this.#tail = prev;
    else next.prev = prev;
    entry.prev = undefined;
    entry.next = undefined;
    entry.queued = false;
  }

  #arm(due: number): void {
    this.#disarm();
    this.#armedAt = due;
    const ms = Math.max(0, due - this.#now());
    if (this.#ownTimers) this.#handle = this.#clock.setTimeout!(this.#onTimer, ms);
    else {
      const timer = setTimeout(this.#onTimer, ms);
      (timer as { unref?: () => void }).unref?.();
      this.#handle = timer;
    }
  }

  /** The clock's time, or the latest due time a fired timer counted if the clock is behind it. */
  #now(): number {
    return Math.max(this.#clock.now(), this.#passed);
  }

  #disarm(): void {
    if (this.#armedAt === Number.POSITIVE_INFINITY) return;
    this.#armedAt = Number.POSITIVE_INFINITY;
    if (this.#ownTimers) this.#clock.clearTimeout!(this.#handle);
    else clearTimeout(this.#handle as ReturnType<typeof setTimeout>);
    this.#handle = undefined;
  }

  /** The timer fired: fires every entry due by now, then arms for the next one. */
  #run(): Promise<unknown> | undefined {
    // The timer counted its own time: what it was armed for has passed even when the clock reads
    // otherwise (a clock without timers that tests move by hand, or does not move at all).
    this.#passed = this.#armedAt;
    const now = this.#now();
    this.#armedAt = Number.POSITIVE_INFINITY;
    this.#handle = undefined;
    let waits: Promise<unknown>[] | undefined;
    for (let entry = this.#head; entry !== undefined && entry.due <= now; entry = this.#head) {
      this.#unlink(entry);
      const wait = entry.fire(now);
      if (wait === undefined) continue;
      if (waits === undefined) waits = [wait];
      else waits.push(wait);
    }
    const head = this.#head;
    if (head !== undefined && head.due < this.#armedAt) this.#arm(head.due);
    return waits && Promise.all(waits);
  }
}

/** An entry of a {@link Scheduler} that calls `run` when due (a read's body deadline). */
export class TimeoutEntry implements Due {
  declare due: number;
  declare prev: Due | undefined;
  declare next: Due | undefined;
  declare queued: boolean;
  declare private readonly _run: () => void;

  constructor(run: () => void) {
    this.due = 0;
    this.prev = undefined;
    this.next = undefined;
    this.queued = false;
    this._run = run;
  }

  fire(): undefined {
    this._run();
    return undefined;
  }
}
