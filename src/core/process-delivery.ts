/**
 * Processing one delivery whose event is parsed and whose dedup key is known: claim → run the
 * handlers → settle the claim → verdict. Complete on success (the next copy is a duplicate), release
 * on failure (the retry runs it again). At the deadline the verdict is `handler_timeout` while the
 * claim stays held, its lease extended (lease.ts), until the handlers settle, so a retry meanwhile is
 * `delivery_in_progress` and the handlers never run twice at once.
 *
 * Nothing here depends on a request: everything travels in one {@link Delivery}, so a hand-off
 * worker runs a job through the same function (handoff/run-job.ts).
 */

import { createToken } from '../dedup/token.js';
import type { ClaimResult } from '../dedup/types.js';
import type { Clock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { abandonClaim, type ClaimSettings, claimNotAnswered, giveUpClaim, sendClaim } from './claims.js';
import { type Deadline, TIMED_OUT } from './deadline.js';
import { DeliveryContext, type SignalSource } from './handler-context.js';
import type { DispatchableEvent } from './handler-registry.js';
import type { ErrorHook, ErrorPhase, WebhookHandler } from './handler-types.js';
import { extendLease, leaseTurnMs } from './lease.js';
import { emit, type LogFields, type LogSink } from './logger.js';
import { report } from './report.js';
import { runHandlers, type Settled } from './run-handlers.js';
import type { Due, Scheduler } from './timers.js';
import { accepted, failed, type Verdict } from './verdict.js';

/** One delivery on its way to its handlers: everything processing needs, nothing of the request. */
export interface Delivery<E extends DispatchableEvent = DispatchableEvent> {
  service: string;
  event: E;
  /** The handlers to run, in order (never empty: an event without handlers is acknowledged before). */
  handlers: readonly WebhookHandler<E>[];
  /** The dedup key: the same for every copy and every retry of this delivery. */
  key: string;
  /** When processing started (epoch ms, the receiver's clock); the deadline counts from it. */
  startedAt: number;
  /** Handler time budget from `startedAt`, in ms. */
  timeoutMs: number;
  /**
   * Holds the signal aborted when whoever waits for the verdict gave up (the sender disconnected, a
   * worker stops); read only when a handler reads its own `signal` or the delivery is cut short, so
   * an adapter may make it on first read.
   */
  upstream: SignalSource | undefined;
  /** Hand-off workers: the queue engine's attempt number, shown to handlers as `context.attempt`. */
  attempt?: number | undefined;
  /** Inbox workers: the app's transaction, shown to handlers as `context.tx`. */
  tx?: unknown;
  /** Work that goes on after the verdict is handed to it (ReceiveInput.waitUntil). */
  waitUntil?: ((work: Promise<unknown>) => void) | undefined;
}

/** What processing needs from the receiver. */
export interface ProcessSettings extends ClaimSettings {
  readonly clock: Clock;
  readonly logger: LogSink | undefined;
  readonly hooks: readonly ErrorHook<DispatchableEvent>[];
  /** The receiver's one timer for every delivery's deadline and lease turns. */
  readonly scheduler: Scheduler;
}

const NEVER = Number.POSITIVE_INFINITY;

function retryAfter(clock: Clock, leaseEndsAt: number): number {
  return Math.max(1_000, leaseEndsAt - clock.now());
}

/**
 * One delivery in progress: its deadline (a {@link Deadline} the store calls and the handlers are
 * raced against) and, once claimed, its lease turns, as ONE entry of the receiver's scheduler due at
 * whichever comes first. A class rather than closures: one is built per delivery on the hot path.
 * Its private state uses TypeScript's `private`, not `#` fields: it never reaches user code, and
 * plain properties cost less to define per instance (−1,500 instructions per request over HTTP).
 */
class DeliveryRun implements Due, Deadline {
  // Declared here and set in the constructor, not initialised in the class body: the CJS build would
  // wrap the class in a renaming helper with an `__init` call per field (test/package/error-name.test.ts).
  declare due: number;
  declare prev: Due | undefined;
  declare next: Due | undefined;
  declare queued: boolean;
  declare readonly at: number;
  declare private readonly _settings: ProcessSettings;
  declare private readonly _delivery: Delivery;
  /** The deadline while it is pending; {@link NEVER} once it passed or was cancelled. */
  declare private _deadlineAt: number;
  declare private _expired: boolean;
  /** The next lease turn; {@link NEVER} while none is pending (an extension in flight, or stopped). */
  declare private _turnAt: number;
  declare private _keeping: boolean;
  /** Resolves the race in progress with {@link TIMED_OUT} when the deadline passes. */
  declare private _wake: ((value: typeof TIMED_OUT) => void) | undefined;
  declare token: string;
  declare context: DeliveryContext | undefined;
  declare lost: boolean;
  /** The claim's answer was not seen in time (claims.ts sendClaim). */
  declare gaveUp: boolean;

  constructor(settings: ProcessSettings, delivery: Delivery) {
    this.due = 0;
    this.prev = undefined;
    this.next = undefined;
    this.queued = false;
    this._expired = false;
    this._turnAt = NEVER;
    this._keeping = false;
    this._wake = undefined;
    this.token = '';
    this.context = undefined;
    this.lost = false;
    this.gaveUp = false;
    this._settings = settings;
    this._delivery = delivery;
    this.at = delivery.startedAt + delivery.timeoutMs;
    this._deadlineAt = this.at;
    settings.scheduler.add(this, this.at);
  }

  remainingMs(): number {
    return Math.max(0, this.at - this._settings.clock.now());
  }

  race<T>(work: Promise<T>): Promise<T | typeof TIMED_OUT> {
    if (this._expired) return Promise.resolve(TIMED_OUT);
    if (this._deadlineAt === NEVER) return work; // cancelled
    return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
      this._wake = resolve;
      work.then(resolve, reject);
    });
  }

  /** Drops the deadline (the lease turns, if any, go on until {@link stopLease}). */
  cancel(): void {
    this._deadlineAt = NEVER;
    this._wake = undefined;
    this._reschedule();
  }

  /** Starts extending the lease every third of `leaseMs` (a store with `extend` only). */
  keepLease(): void {
    const { store, leaseMs, clock } = this._settings;
    if (typeof store.extend !== 'function') return;
    this._keeping = true;
    this._turnAt = clock.now() + leaseTurnMs(leaseMs);
    this._reschedule();
  }

  /** The handlers settled: no more extensions. */
  stopLease(): void {
    this._keeping = false;
    this._turnAt = NEVER;
    this._reschedule();
  }

  fire(now: number): Promise<unknown> | undefined {
    if (now >= this._deadlineAt) {
      this._deadlineAt = NEVER;
      this._expired = true;
      const wake = this._wake;
      this._wake = undefined;
      wake?.(TIMED_OUT);
    }
    let turn: Promise<unknown> | undefined;
    if (now >= this._turnAt) {
      this._turnAt = NEVER;
      turn = this._extend();
    }
    this._reschedule();
    return turn;
  }

  private async _extend(): Promise<void> {
    const settings = this._settings;
    const extended = await extendLease(
      settings,
      this._delivery.key,
      this.token,
      () => this.fields(),
      () => !this._keeping,
    );
    // Settled meanwhile: a `false` now only means the completion or release went first.
    if (!this._keeping) return;
    if (extended === false) {
      this._keeping = false;
      this._leaseLost();
      return;
    }
    this._turnAt = settings.clock.now() + leaseTurnMs(settings.leaseMs);
    this._reschedule();
  }

  private _reschedule(): void {
    const due = Math.min(this._deadlineAt, this._turnAt);
    const { scheduler } = this._settings;
    if (due === NEVER) scheduler.remove(this);
    else if (!this.queued || this.due !== due) scheduler.add(this, due);
  }

  fields(): LogFields {
    if (this.context) return this.context.fields();
    const { service, event, key } = this._delivery;
    return { service, deliveryId: event.deliveryId, event: event.name, dedupKey: key };
  }

  fail(level: 'warn' | 'error', message: string, error: unknown, phase: ErrorPhase): void {
    const { event, key } = this._delivery;
    const { hooks, logger } = this._settings;
    report(hooks, logger, level, message, this.fields(), error, {
      phase,
      event,
      deliveryId: event.deliveryId,
      dedupKey: key,
    });
  }

  /**
   * Completes (`success`) or releases the claim; reports a failure or a fenced write (the lease
   * ended). A release that failed may not have run: the claim would hold until its lease ends and the
   * CRM service's quick retries (§6 rule 5: 1 s, 2 s) would get 409, so its token is abandoned in the
   * background, which drops the lease whether the release ran or not.
   */
  async settle(success: boolean): Promise<void> {
    const settings = this._settings;
    const { store, ttlMs, storeTimeoutMs } = settings;
    const { key } = this._delivery;
    const { token } = this;
    let settled: boolean | { error: unknown };
    try {
      settled = success
        ? await store.complete(key, token, { ttlMs, callTimeoutMs: storeTimeoutMs })
        : await store.release(key, token, { callTimeoutMs: storeTimeoutMs });
    } catch (error) {
      if (!success) abandonClaim(settings, key, token);
      settled = { error };
    }
    if (settled === true || (settled === false && this.lost)) return; // a lost lease is reported once
    const phase = success ? 'complete' : 'release';
    const error =
      settled === false
        ? new WebhookError(
            'lease_lost',
            `The claim's lease (leaseMs ${settings.leaseMs}) ended before ${phase}; another attempt may run this delivery too.`,
          )
        : settled.error;
    this.fail('warn', `dedup store ${phase} failed`, error, phase);
  }

  /** The handlers settled after the deadline answered: report, then settle the claim. */
  late(ran: Settled): Promise<void> {
    this.stopLease();
    const context = this.context!;
    context.dispose();
    if (ran.kind === 'threw') this.fail('error', 'webhook handler threw', ran.error, 'handler');
    else emit(this._settings.logger, 'info', 'webhook handler finished after its deadline', context.fields());
    return this.settle(ran.kind === 'ok');
  }

  private _leaseLost(): void {
    this.lost = true;
    const error = new WebhookError(
      'lease_lost',
      `The claim's lease (leaseMs ${this._settings.leaseMs}) ended while the handlers ran; another attempt may run this delivery too.`,
    );
    this.context?.loseLease(error);
    this.fail('error', 'webhook claim lost while its handlers ran', error, 'lease');
  }
}

/** Claims, runs and settles one delivery; never rejects. */
export async function processDelivery(settings: ProcessSettings, delivery: Delivery): Promise<Verdict> {
  const { clock, logger, hooks, leaseMs } = settings;
  const { service, event, key, timeoutMs } = delivery;
  const { deliveryId, name } = event;
  const run = new DeliveryRun(settings, delivery);
  try {
    // The receiver chooses the token, so a claim whose answer it never sees can be abandoned (claims.ts).
    const token = createToken();
    let claim: ClaimResult;
    try {
      const call = sendClaim(settings, key, token, run);
      // A store bound of 0 is the receiver's own in-process store, which cannot hang: no race.
      const answer = settings.storeTimeoutMs === 0 ? await call : await run.race(call);
      if (answer === TIMED_OUT) throw claimNotAnswered(run);
      claim = answer;
    } catch (error) {
      run.gaveUp = true;
      giveUpClaim(settings, key, token, error);
      // Fail closed: no handler runs without a claim.
      report(hooks, logger, 'error', 'dedup store claim failed', run.fields(), error, {
        phase: 'claim',
        event,
        deliveryId,
        dedupKey: key,
      });
      return failed(service, 'store_unavailable', error, { deliveryId, event: name });
    }
    if (claim.status === 'completed') {
      if (logger?.verbose) emit(logger, 'debug', 'webhook duplicate: already completed', run.fields());
      return accepted('duplicate', service, deliveryId, name);
    }
    if (claim.status === 'in_progress') {
      if (logger?.verbose) emit(logger, 'info', 'webhook in progress elsewhere', run.fields());
      const retry = retryAfter(clock, claim.leaseEndsAt);
      return failed(service, 'delivery_in_progress', undefined, { deliveryId, event: name }, retry);
    }
    run.token = claim.token;
    const context = new DeliveryContext(
      clock,
      run.at,
      service,
      name,
      deliveryId,
      key,
      delivery.upstream,
      logger,
    );
    if (delivery.attempt !== undefined) context.attempt = delivery.attempt;
    if (delivery.tx !== undefined) context.tx = delivery.tx;
    run.context = context;

    // The lease is kept until the handlers settle, also past the deadline: a retry meanwhile gets
    // delivery_in_progress instead of running them a second time alongside.
    run.keepLease();
    const handlers = runHandlers(delivery.handlers, event, context);
    const ran = await run.race(handlers);
    if (ran === TIMED_OUT) {
      // Answer now (before the sender's 10 s); keep the claim until the handlers settle.
      context.expire();
      const timeout = new WebhookError('handler_timeout', `Handlers still running after ${timeoutMs} ms.`);
      run.fail('warn', 'webhook handler timed out', timeout, 'timeout');
      const late = handlers.then((settled) => run.late(settled));
      delivery.waitUntil?.(late);
      // A retry before the handlers settle gets delivery_in_progress until the lease ends (at least
      // `leaseMs` from the start; it is extended while they run).
      const retry = retryAfter(clock, delivery.startedAt + leaseMs);
      return failed(service, 'handler_timeout', timeout, { deliveryId, event: name }, retry);
    }
    run.stopLease();
    context.dispose();
    if (ran.kind === 'threw') run.fail('error', 'webhook handler threw', ran.error, 'handler');
    // A slow store must not hold the answer past the deadline: the write goes on, its failure is
    // still reported.
    // The receiver's own store (bound 0) cannot hang; any other is raced against the deadline.
    const settling = run.settle(ran.kind === 'ok');
    const settled = settings.storeTimeoutMs === 0 ? await settling : await run.race(settling);
    if (settled === TIMED_OUT) {
      delivery.waitUntil?.(settling);
      emit(logger, 'warn', 'answered at the deadline before the dedup store settled', context.fields());
    }
    if (ran.kind === 'threw')
      return failed(service, 'handler_failed', ran.error, { deliveryId, event: name });
    if (logger?.verbose)
      emit(logger, 'debug', 'webhook processed', {
        ...context.fields(),
        durationMs: clock.now() - delivery.startedAt,
      });
    return accepted('handled', service, deliveryId, name);
  } finally {
    run.cancel();
  }
}
