/**
 * Keeping a claim's lease while its handlers run. The lease (`leaseMs`) is what stops another attempt
 * from running a delivery at the same time; a handler that outlives it (a slow hand-off job, a
 * direct-mode handler past its deadline that ignores its `signal`) would otherwise be overlapped by
 * the next attempt. So the lease is extended through the held claim (`Held.extend`) every third of
 * `leaseMs` from the claim until the handlers settle, and a claim that answers `false` (the lease
 * ended and the key may be someone else's) is handed to `lost` at once. Each turn is an entry of the
 * receiver's scheduler; a claim without `extend` keeps the old bound: the lease must outlive the
 * handler budget.
 */

import type { Held, Settled } from '../../dedup/claims.js';
import type { Due, Scheduler } from '../../shared/scheduler.js';
import { emit, errField, type LogFields, type LogSink } from '../logger.js';

/** What keeping a lease needs from the receiver. */
export interface LeaseSettings {
  readonly leaseMs: number;
  readonly clock: { now(): number };
  readonly logger: LogSink | undefined;
  readonly scheduler: Scheduler;
}

/** Who holds the lease: told once when it is lost; its fields go into the log. */
export interface LeaseHolder {
  leaseLost(): void;
  fields(): LogFields;
}

/** Milliseconds between two extensions of a lease of `leaseMs`: a third of it. */
function leaseTurnMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 3));
}

/** The lease of one held claim, extended on the scheduler until {@link LeaseKeeper.stop}. */
export class LeaseKeeper implements Due {
  declare due: number;
  declare prev: Due | undefined;
  declare next: Due | undefined;
  declare queued: boolean;
  declare private readonly _settings: LeaseSettings;
  declare private readonly _held: Held;
  declare private readonly _holder: LeaseHolder;
  declare private _keeping: boolean;

  /** Keeps the lease of `held`, which has `extend`. */
  constructor(settings: LeaseSettings, held: Held, holder: LeaseHolder) {
    this.due = 0;
    this.prev = undefined;
    this.next = undefined;
    this.queued = false;
    this._settings = settings;
    this._held = held;
    this._holder = holder;
    this._keeping = true;
    settings.scheduler.add(this, settings.clock.now() + leaseTurnMs(settings.leaseMs));
  }

  /** The handlers settled: no more extensions. */
  stop(): void {
    this._keeping = false;
    this._settings.scheduler.remove(this);
  }

  fire(): Promise<unknown> {
    return this._turn();
  }

  private async _turn(): Promise<void> {
    const settings = this._settings;
    // A value or a promise (the held claim's `sync` says which); awaited either way: a turn is rare.
    const extended: Settled = await this._held.extend!();
    // Settled meanwhile: a `false` now only means the completion or release went first.
    if (!this._keeping) return;
    if (extended === false) {
      this._keeping = false;
      this._holder.leaseLost();
      return;
    }
    if (extended !== true)
      emit(settings.logger, 'warn', 'dedup store extend failed; trying again', {
        ...this._holder.fields(),
        err: errField(extended.error),
      });
    settings.scheduler.add(this, settings.clock.now() + leaseTurnMs(settings.leaseMs));
  }
}
