/**
 * The receiver's scheduler for the runtime it runs on. Cloudflare Workers (workerd) run a timer only
 * while the request that set it is alive: the one timer of {@link Scheduler}, armed by one request
 * for the deliveries of all, never fires once that request has answered, and every later delivery
 * would be left without a deadline (workerd then cancels it as hung, a 500 instead of the 503
 * `handler_timeout` the sender retries). There each delivery keeps a timer of its own, set and
 * cleared by its own request.
 */
import type { Clock } from '../shared/clock.js';
import { clockSchedules, type Due, Scheduler } from '../shared/scheduler.js';

/** One runtime timer per entry: each set by the request that adds the entry. */
class EntryTimers extends Scheduler {
  readonly #clock: Clock;
  readonly #timers = new Map<Due, ReturnType<typeof setTimeout>>();

  constructor(clock: Clock) {
    super(clock);
    this.#clock = clock;
  }

  override get idle(): boolean {
    return this.#timers.size === 0;
  }

  override add(entry: Due, due: number): void {
    this.remove(entry);
    entry.due = due;
    entry.queued = true;
    const timer = setTimeout(
      () => {
        this.#timers.delete(entry);
        entry.queued = false;
        // The timer counted its own time: `due` has passed even if the clock reads otherwise.
        void entry.fire(Math.max(this.#clock.now(), due));
      },
      Math.max(0, due - this.#clock.now()),
    );
    this.#timers.set(entry, timer);
  }

  override remove(entry: Due): void {
    if (!entry.queued) return;
    clearTimeout(this.#timers.get(entry));
    this.#timers.delete(entry);
    entry.queued = false;
  }
}

/** Whether this is Cloudflare Workers, whose timers end with their request (its documented marker). */
function requestScopedTimers(): boolean {
  return (
    (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers'
  );
}

/**
 * The scheduler of a receiver on `clock`: the clock's own timers when it has them (a virtual clock),
 * else the runtime's; one timer per delivery on Workers, one for all of them elsewhere. Sets no
 * timer itself: receivers may be created in a Worker's global scope, where timers are refused.
 */
export function createScheduler(clock: Clock): Scheduler {
  return !clockSchedules(clock) && requestScopedTimers() ? new EntryTimers(clock) : new Scheduler(clock);
}
