/**
 * Running one delivery whose event is parsed and whose dedup key is known: claim → run the handlers →
 * settle the claim → verdict. Complete on success (the next copy is a duplicate), release on failure
 * (the retry runs it again). At the deadline the verdict is `handler_timeout` while the claim stays
 * held, its lease extended (lease.ts), until the handlers settle, so a retry meanwhile is
 * `delivery_in_progress` and the handlers never run twice at once.
 *
 * Nothing here depends on a request: everything travels in one {@link Delivery}, so a hand-off
 * worker runs a job through the same function (handoff/job/run-job.ts).
 *
 * The one deliberate value-or-promise fork of the pipeline is here ({@link runDelivery}), decided by
 * the receiver's claims (dedup/claims.ts), once: the memory store's claims answer at once
 * (dedup/memory-claims.ts), so the claim and the settle are plain calls, and handlers that return no
 * promise settle inline ({@link runHandlers}): such a delivery returns its verdict without a promise,
 * a deadline entry, a race or a lease turn, since nothing it waits for can outlast the deadline. Any
 * other claim (a store over the network, a database inbox row given as `Delivery.held`) is awaited,
 * raced against the deadline. One lifecycle either way. Measured in docs/benchmarks.md ("Fast and
 * plain"). The receive path reads the same fork once more, here too ({@link afterDelivery}): to give
 * back its in-flight slot (`maxInFlight`) when the verdict is in, without a promise when there is none.
 */

import type { ClaimAnswer, Claims, ClaimTerms, Held, Settled } from '../../dedup/claims.js';
import type { Clock } from '../../shared/clock.js';
import { WebhookError } from '../../shared/errors.js';
import type { Due, Scheduler } from '../../shared/scheduler.js';
import { type Deadline, TIMED_OUT } from '../deadline.js';
import type { DispatchableEvent } from '../handler-registry.js';
import type { ErrorHook, ErrorPhase, WebhookHandler } from '../handler-types.js';
import type { DeliveryFacts } from '../lag.js';
import { emit, type LogFields, type LogSink } from '../logger.js';
import { report } from '../report.js';
import type { RouteSource } from '../route-secrets.js';
import { accepted, failed, type Verdict } from '../verdict.js';
import { DeliveryContext, type SignalSource } from './context.js';
import { LeaseKeeper } from './lease.js';

/** One delivery on its way to its handlers: everything running it needs, nothing of the request. */
export interface Delivery<E extends DispatchableEvent = DispatchableEvent> {
  service: string;
  event: E;
  /** The handlers to run, in order (never empty: an event without handlers is acknowledged before). */
  handlers: readonly WebhookHandler<E>[];
  /** The dedup key: the same for every copy and every retry of this delivery. */
  dedupKey: string;
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
  /** Where the delivery's route is read (the request's input, a job's `route`): `context.route`. */
  route?: RouteSource | undefined;
  /** Work that goes on after the verdict is handed to it (ReceiveInput.waitUntil). */
  waitUntil?: ((work: Promise<unknown>) => void) | undefined;
  /**
   * A claim already held (a database inbox row): not claimed again, and completed, released and
   * extended through this.
   */
  held?: Held | undefined;
  /** The outcome reporting's record of this delivery (core/lag.ts): told when the handlers start. */
  facts?: DeliveryFacts | undefined;
}

/** What running a delivery needs from the receiver, built once per receiver. */
export interface DeliverySettings extends ClaimTerms {
  /** The receiver's claims (its `dedup` store's). */
  readonly claims: Claims;
  readonly clock: Clock;
  readonly logger: LogSink | undefined;
  readonly hooks: readonly ErrorHook<DispatchableEvent>[];
  /** The receiver's one timer for every delivery's deadline and lease turns. */
  readonly scheduler: Scheduler;
}

/** How a delivery's handlers ended: all returned, or one threw (the rest did not run). */
type HandlersRan = { readonly threw: false } | { readonly threw: true; readonly error: unknown };

const RAN: HandlersRan = Object.freeze({ threw: false });

/**
 * Runs `handlers` in order; the first throw stops the rest. Settled inline while every handler
 * returns nothing (the one value-or-promise fork: see the head of this file); a promise once one
 * returns something to wait for. Never rejects.
 */
function runHandlers<E>(
  handlers: readonly WebhookHandler<E>[],
  event: E,
  context: DeliveryContext,
): HandlersRan | Promise<HandlersRan> {
  for (let i = 0; i < handlers.length; i++) {
    let done: unknown;
    try {
      done = handlers[i]!(event, context);
    } catch (error) {
      return { threw: true, error };
    }
    if (done !== undefined) return finishHandlers(done, i + 1, handlers, event, context);
  }
  return RAN;
}

async function finishHandlers<E>(
  pending: unknown,
  from: number,
  handlers: readonly WebhookHandler<E>[],
  event: E,
  context: DeliveryContext,
): Promise<HandlersRan> {
  try {
    await pending;
    for (let i = from; i < handlers.length; i++) {
      const done = handlers[i]!(event, context);
      if (done !== undefined) await done;
    }
    return RAN;
  } catch (error) {
    return { threw: true, error };
  }
}

function retryAfter(clock: Clock, leaseEndsAt: number): number {
  return Math.max(1_000, leaseEndsAt - clock.now());
}

/**
 * One delivery in progress: the facts its handler context is built from, and its deadline (a
 * {@link Deadline} the claim, the settle and the handlers are raced against) as an entry of the receiver's
 * scheduler, added only once something is waited for. A class rather than closures: one is built per
 * delivery on the hot path. Its private state uses TypeScript's `private`, not `#` fields: it never
 * reaches user code, and plain properties cost less to define per instance.
 */
class DeliveryRun implements Due, Deadline {
  // Declared here and set in the constructor, not initialised in the class body: the CJS build would
  // wrap the class in a renaming helper with an `__init` call per field (test/package/error-name.test.ts).
  declare due: number;
  declare prev: Due | undefined;
  declare next: Due | undefined;
  declare queued: boolean;
  declare readonly at: number;
  declare readonly clock: Clock;
  declare readonly logger: LogSink | undefined;
  declare readonly service: string;
  declare readonly event: DispatchableEvent;
  declare readonly dedupKey: string;
  declare readonly upstream: SignalSource | undefined;
  declare readonly attempt: number | undefined;
  declare readonly tx: unknown;
  declare readonly route: RouteSource | undefined;
  declare readonly settings: DeliverySettings;
  declare private _expired: boolean;
  declare private _cancelled: boolean;
  /** Resolves the race in progress with {@link TIMED_OUT} when the deadline passes. */
  declare private _wake: ((value: typeof TIMED_OUT) => void) | undefined;
  declare context: DeliveryContext | undefined;
  declare lease: LeaseKeeper | undefined;
  declare lost: boolean;

  constructor(settings: DeliverySettings, delivery: Delivery) {
    this.due = 0;
    this.prev = undefined;
    this.next = undefined;
    this.queued = false;
    this.at = delivery.startedAt + delivery.timeoutMs;
    this.clock = settings.clock;
    this.logger = settings.logger;
    this.service = delivery.service;
    this.event = delivery.event;
    this.dedupKey = delivery.dedupKey;
    this.upstream = delivery.upstream;
    this.attempt = delivery.attempt;
    this.tx = delivery.tx;
    this.route = delivery.route;
    this.settings = settings;
    this._expired = false;
    this._cancelled = false;
    this._wake = undefined;
    this.context = undefined;
    this.lease = undefined;
    this.lost = false;
  }

  /** Starts counting the deadline on the scheduler (once something may wait past it). */
  schedule(): void {
    if (!this.queued && !this._expired && !this._cancelled) this.settings.scheduler.add(this, this.at);
  }

  remainingMs(): number {
    return Math.max(0, this.at - this.clock.now());
  }

  race<T>(work: Promise<T>): Promise<T | typeof TIMED_OUT> {
    if (this._expired) return Promise.resolve(TIMED_OUT);
    if (this._cancelled) return work;
    this.schedule();
    return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
      this._wake = resolve;
      work.then(resolve, reject);
    });
  }

  /** Drops the deadline (the lease turns, if any, go on until the handlers settle). */
  cancel(): void {
    this._cancelled = true;
    this._wake = undefined;
    if (this.queued) this.settings.scheduler.remove(this);
  }

  fire(): undefined {
    this._expired = true;
    const wake = this._wake;
    this._wake = undefined;
    wake?.(TIMED_OUT);
    return undefined;
  }

  fields(): LogFields {
    if (this.context) return this.context.fields();
    const { service, event, dedupKey } = this;
    return { service, deliveryId: event.deliveryId, event: event.name, dedupKey };
  }

  fail(level: 'warn' | 'error', message: string, error: unknown, phase: ErrorPhase): void {
    const { event, dedupKey } = this;
    report(this.settings, {
      level,
      message,
      fields: this.fields(),
      error,
      phase,
      event,
      deliveryId: event.deliveryId,
      dedupKey,
    });
  }

  /**
   * Completes (`success`) or releases the held claim and reports a failure or a fenced write: at once
   * for a synchronous claim (`undefined`), else a promise that never rejects.
   */
  settle(held: Held, success: boolean): Promise<void> | undefined {
    if (held.sync) {
      this.settled(success ? held.complete() : held.release(), success);
      return undefined;
    }
    return (success ? held.complete() : held.release()).then((settled) => this.settled(settled, success));
  }

  /** Reports a completion or release that failed or was fenced off. */
  settled(settled: Settled, success: boolean): void {
    if (settled === true || (settled === false && this.lost)) return; // a lost lease is reported once
    const phase = success ? 'complete' : 'release';
    const error =
      settled === false
        ? new WebhookError(
            'lease_lost',
            `The claim's lease (leaseMs ${this.settings.leaseMs}) ended before ${phase}; another attempt may run this delivery too.`,
          )
        : settled.error;
    this.fail('warn', `dedup store ${phase} failed`, error, phase);
  }

  /** The handlers settled after the deadline answered: report, then settle the claim. */
  late(held: Held, ran: HandlersRan): Promise<void> | undefined {
    this.lease?.stop();
    const context = this.context!;
    context.dispose();
    if (ran.threw) this.fail('error', 'webhook handler threw', ran.error, 'handler');
    else emit(this.logger, 'info', 'webhook handler finished after its deadline', context.fields());
    return this.settle(held, !ran.threw);
  }

  /** The facts of a refusal or failure of this delivery. */
  facts(): { deliveryId: string; event: string } {
    return { deliveryId: this.event.deliveryId, event: this.event.name };
  }

  /** The lease keeper found the claim's lease gone while the handlers ran. */
  leaseLost(): void {
    this.lost = true;
    const error = new WebhookError(
      'lease_lost',
      `The claim's lease (leaseMs ${this.settings.leaseMs}) ended while the handlers ran; another attempt may run this delivery too.`,
    );
    this.context?.loseLease(error);
    this.fail('error', 'webhook claim lost while its handlers ran', error, 'lease');
  }
}

/**
 * Claims, runs and settles one delivery; never rejects. A verdict without a promise when nothing was
 * pending: synchronous claims and handlers that returned nothing (the fork: see the head of this file).
 */
export function runDelivery(settings: DeliverySettings, delivery: Delivery): Verdict | Promise<Verdict> {
  const run = new DeliveryRun(settings, delivery);
  if (delivery.held !== undefined) return hold(run, delivery, delivery.held);
  const { claims } = settings;
  if (claims.sync) {
    const answer = claims.claim(delivery.dedupKey);
    return answer.status === 'claimed' ? hold(run, delivery, answer) : unclaimed(run, answer);
  }
  return claims
    .claim(delivery.dedupKey, run)
    .then((answer) => (answer.status === 'claimed' ? hold(run, delivery, answer) : unclaimed(run, answer)));
}

/**
 * `running` (what {@link runDelivery} returned), `settled()` called once its verdict is in: at once for
 * a verdict without a promise (no await, no allocation), when the promise settles otherwise.
 */
export function afterDelivery(
  running: Verdict | Promise<Verdict>,
  settled: () => void,
): Verdict | Promise<Verdict> {
  if (!(running instanceof Promise)) {
    settled();
    return running;
  }
  return running.then(
    (verdict) => {
      settled();
      return verdict;
    },
    (error: unknown) => {
      settled();
      throw error;
    },
  );
}

/** A claim that lets no handler run: a failed store (fail closed), a duplicate, or busy elsewhere. */
function unclaimed(run: DeliveryRun, answer: Exclude<ClaimAnswer, { status: 'claimed' }>): Verdict {
  run.cancel();
  const { service, event, logger, clock } = run;
  if (answer.status === 'failed') {
    // Fail closed: no handler runs without a claim.
    run.fail('error', 'dedup store claim failed', answer.error, 'claim');
    return failed(service, 'store_unavailable', answer.error, run.facts());
  }
  if (answer.status === 'duplicate') {
    if (logger?.verbose) emit(logger, 'debug', 'webhook duplicate: already completed', run.fields());
    return accepted('duplicate', service, event.deliveryId, event.name);
  }
  if (logger?.verbose) emit(logger, 'info', 'webhook in progress elsewhere', run.fields());
  const retry = retryAfter(clock, answer.leaseEndsAt);
  return failed(service, 'delivery_in_progress', undefined, run.facts(), retry);
}

/**
 * Runs the handlers under `held`, then settles it: inline while nothing returned a promise and the
 * claim is synchronous, else awaited.
 */
function hold(run: DeliveryRun, delivery: Delivery, held: Held): Verdict | Promise<Verdict> {
  const context = new DeliveryContext(run);
  run.context = context;
  const { facts } = delivery;
  if (facts !== undefined) facts.handlersAt = run.clock.now();
  const pending = runHandlers(delivery.handlers, delivery.event, context);
  if (pending instanceof Promise) return awaitHandlers(run, delivery, held, pending);
  context.dispose();
  if (pending.threw) run.fail('error', 'webhook handler threw', pending.error, 'handler');
  const settling = run.settle(held, !pending.threw);
  if (settling === undefined) return ran(run, delivery, pending);
  return settledThen(run, delivery, settling, pending);
}

/** The verdict of a delivery whose handlers ran and whose claim was settled. */
function ran(run: DeliveryRun, delivery: Delivery, handlers: HandlersRan): Verdict {
  const { service, event, logger } = run;
  if (handlers.threw) return failed(service, 'handler_failed', handlers.error, run.facts());
  if (logger?.verbose)
    emit(logger, 'debug', 'webhook processed', {
      ...run.context!.fields(),
      durationMs: run.clock.now() - delivery.startedAt,
    });
  return accepted('handled', service, event.deliveryId, event.name);
}

/**
 * Handlers that returned a promise, raced against the deadline. The lease is kept until they settle,
 * also past the deadline: a retry meanwhile gets delivery_in_progress instead of running them a second
 * time alongside. The settle that follows is inline with a synchronous claim, raced otherwise.
 */
async function awaitHandlers(
  run: DeliveryRun,
  delivery: Delivery,
  held: Held,
  pending: Promise<HandlersRan>,
): Promise<Verdict> {
  const { settings, context, service } = run;
  try {
    if (held.extend !== undefined) run.lease = new LeaseKeeper(settings, held, run);
    const raced = await run.race(pending);
    if (raced === TIMED_OUT) {
      // Answer now (before the sender's 10 s); keep the claim until the handlers settle.
      context!.expire();
      const { timeoutMs } = delivery;
      const timeout = new WebhookError('handler_timeout', `Handlers still running after ${timeoutMs} ms.`);
      run.fail('warn', 'webhook handler timed out', timeout, 'timeout');
      const late = pending.then((settled) => run.late(held, settled));
      delivery.waitUntil?.(late);
      // A retry before the handlers settle gets delivery_in_progress until the lease ends (at least
      // `leaseMs` from the start; it is extended while they run).
      const retry = retryAfter(run.clock, delivery.startedAt + settings.leaseMs);
      return failed(service, 'handler_timeout', timeout, run.facts(), retry);
    }
    run.lease?.stop();
    context!.dispose();
    if (raced.threw) run.fail('error', 'webhook handler threw', raced.error, 'handler');
    const settling = run.settle(held, !raced.threw);
    if (settling !== undefined) await settleRaced(run, delivery, settling);
    return ran(run, delivery, raced);
  } finally {
    run.cancel();
  }
}

/** Handlers that returned nothing under a claim that answers later: the verdict once it settled. */
async function settledThen(
  run: DeliveryRun,
  delivery: Delivery,
  settling: Promise<void>,
  handlers: HandlersRan,
): Promise<Verdict> {
  try {
    await settleRaced(run, delivery, settling);
    return ran(run, delivery, handlers);
  } finally {
    run.cancel();
  }
}

/**
 * Waits for the completion or release of the claim. A slow store must not hold the answer past the
 * deadline: the write goes on, its failure is still reported.
 */
async function settleRaced(run: DeliveryRun, delivery: Delivery, settling: Promise<void>): Promise<void> {
  if ((await run.race(settling)) === TIMED_OUT) {
    delivery.waitUntil?.(settling);
    emit(run.logger, 'warn', 'answered at the deadline before the dedup store settled', run.fields());
  }
}
