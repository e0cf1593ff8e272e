/**
 * Keeping a claim's lease while its handlers run. The lease (`leaseMs`) is what stops another attempt
 * from running a delivery at the same time; a handler that outlives it (a slow hand-off job, a
 * direct-mode handler past its deadline that ignores its `signal`) would otherwise be overlapped by
 * the next attempt. So the lease is extended (`DedupStore.extend`) every third of `leaseMs` from the
 * claim until the handlers settle, and a store that answers `false` (the lease ended and the key may
 * be someone else's) is handed to `lost` at once. Each turn is an entry of the receiver's scheduler;
 * a store without `extend` keeps the old bound: the lease must outlive the handler budget.
 */
import type { Due, Scheduler } from '../../shared/scheduler.js';
import { emit, errField, type LogFields, type LogSink } from '../logger.js';
import { extendLease, leaseTurnMs, type StoreSettings } from './store-calls.js';

/** What keeping a lease needs from the receiver. */
export interface LeaseSettings extends StoreSettings {
  readonly clock: { now(): number };
  readonly logger: LogSink | undefined;
  readonly scheduler: Scheduler;
}

/** Who holds the lease: told once when it is lost; its fields go into the log. */
export interface LeaseHolder {
  leaseLost(): void;
  fields(): LogFields;
}

/** The lease of one claimed delivery, extended on the scheduler until {@link LeaseKeeper.stop}. */
export class LeaseKeeper implements Due {
  declare due: number;
  declare prev: Due | undefined;
  declare next: Due | undefined;
  declare queued: boolean;
  declare private readonly _settings: LeaseSettings;
  declare private readonly _key: string;
  declare private readonly _token: string;
  declare private readonly _holder: LeaseHolder;
  declare private _keeping: boolean;

  constructor(settings: LeaseSettings, key: string, token: string, holder: LeaseHolder) {
    this.due = 0;
    this.prev = undefined;
    this.next = undefined;
    this.queued = false;
    this._settings = settings;
    this._key = key;
    this._token = token;
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
    const extended = await extendLease(settings, this._key, this._token);
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
