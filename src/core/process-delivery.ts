/**
 * Processing one delivery whose event is parsed and whose dedup key is known: claim → run the
 * handlers → settle the claim → outcome. Complete on success (the next copy is a duplicate), release
 * on failure (the retry runs it again). At the deadline the answer is 503 while the claim stays held
 * until the handlers settle, so a retry meanwhile gets 409 and the handlers never run twice at once.
 *
 * Nothing here depends on an HTTP request: everything a delivery needs travels in one
 * {@link Delivery}, so the same function can run a delivery taken from a queue later
 * (docs/architecture.md, "Dispatch modes").
 */
import { WebhookError } from '../shared/errors.js';
import type { Awaitable } from './awaitable.js';
import { withinDeadline } from './deadline-timer.js';
import { DeliveryContext } from './handler-context.js';
import type { DispatchableEvent } from './handler-registry.js';
import type { ErrorHook, ErrorPhase, WebhookHandler } from './handler-types.js';
import { emit } from './logger.js';
import { acknowledged, failure } from './outcomes.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';
import { type RunResult, runHandlers } from './run-handlers.js';
import { StoreCallFailed } from './store-calls.js';
import type { StoreOps } from './store-ops.js';

/** One delivery on its way to its handlers: everything processing needs, nothing of the request. */
export interface Delivery<E extends DispatchableEvent = DispatchableEvent> {
  service: 'mail' | 'crm';
  event: E;
  /** The handlers to run, in order (never empty: an event without handlers is acknowledged before). */
  handlers: readonly WebhookHandler<E>[];
  /** The dedup key: the same for every copy and every retry of this delivery. */
  key: string;
  /** When processing started (epoch ms, the receiver's clock); the handler deadline counts from it. */
  startedAt: number;
  /** Aborted when whoever waits for the outcome gave up (the sender disconnected). */
  signal: AbortSignal | undefined;
  /** Hand-off workers: the queue engine's attempt number, shown to handlers as `context.attempt`. */
  attempt?: number | undefined;
}

/** Claims, runs and settles one delivery; never throws, never rejects. */
export type ProcessDelivery = (delivery: Delivery) => Awaitable<ReceiveOutcome>;

/** A delivery whose claim was granted. */
interface Claimed {
  delivery: Delivery;
  context: DeliveryContext;
  token: string;
  /** When the claim's lease ends at the latest (set once the handlers went asynchronous). */
  leaseEndsAt: number;
}

type Hooks = readonly ErrorHook<DispatchableEvent>[];

/** The processing step of a receiver; `store` is chosen once (store-ops.ts). */
export function createProcessDelivery(
  options: ResolvedOptions,
  hooks: Hooks,
  store: StoreOps,
): ProcessDelivery {
  const { clock, logger, leaseMs, timeoutMs } = options;

  function fail(
    claimed: Claimed,
    level: 'warn' | 'error',
    message: string,
    error: unknown,
    phase: ErrorPhase,
  ): void {
    const { context } = claimed;
    const { event, key } = claimed.delivery;
    report(hooks, logger, level, message, context.fields(), error, {
      phase,
      event,
      deliveryId: event.deliveryId,
      key,
    });
  }

  function claimedOrNot(
    delivery: Delivery,
    claim: Awaited<ReturnType<StoreOps['claim']>>,
  ): Awaitable<ReceiveOutcome> {
    const { event, key } = delivery;
    const { deliveryId, name } = event;
    if (claim instanceof StoreCallFailed) {
      // Fail closed: no handler runs without a claim.
      report(hooks, logger, 'error', 'dedup store claim failed', fields(delivery), claim.cause, {
        phase: 'claim',
        event,
        deliveryId,
        key,
      });
      return failure('store_unavailable', { deliveryId, event: name });
    }
    if (claim.status === 'completed') {
      if (logger) emit(logger, 'debug', 'webhook duplicate: already completed', fields(delivery));
      return acknowledged('duplicate', deliveryId, name);
    }
    if (claim.status === 'in_progress') {
      const seconds = Math.max(1, Math.ceil((claim.leaseEndsAt - clock.now()) / 1000));
      if (logger) emit(logger, 'info', 'webhook in progress elsewhere', fields(delivery));
      return failure('delivery_in_progress', { deliveryId, event: name, retryAfterSeconds: seconds });
    }
    const context = new DeliveryContext(
      clock,
      delivery.startedAt + timeoutMs,
      delivery.service,
      name,
      deliveryId,
      key,
      delivery.signal,
      logger,
    );
    if (delivery.attempt !== undefined) context.attempt = delivery.attempt;
    const claimed: Claimed = { delivery, context, token: claim.token, leaseEndsAt: 0 };
    const run = runHandlers(delivery.handlers, event, context, clock);
    if (!(run instanceof Promise)) return ran(claimed, run);
    // The claim was granted just now: its lease ends at most `leaseMs` from here. After a timeout the
    // claim is held until the handlers settle or the lease ends, so that is when a retry can succeed.
    claimed.leaseEndsAt = clock.now() + leaseMs;
    return run.then((result) => ran(claimed, result));
  }

  function ran(claimed: Claimed, run: RunResult): Awaitable<ReceiveOutcome> {
    const { context } = claimed;
    const { deliveryId, name } = claimed.delivery.event;
    if (run.kind === 'ok') {
      context.dispose();
      const settled = settle(claimed, true);
      return settled ? byDeadline(claimed, settled).then(() => processed(claimed)) : processed(claimed);
    }
    if (run.kind === 'threw') {
      context.dispose();
      fail(claimed, 'error', 'webhook handler threw', run.error, 'handler');
      const settled = settle(claimed, false);
      const outcome = failure('handler_failed', { deliveryId, event: name });
      return settled ? byDeadline(claimed, settled).then(() => outcome) : outcome;
    }
    // Timed out: answer now (before the sender's 10 s), keep the claim until the handlers settle.
    const timeout = new WebhookError('handler_timeout', `Handlers still running after ${timeoutMs} ms.`);
    fail(claimed, 'warn', 'webhook handler timed out', timeout, 'timeout');
    void run.settled.then((late) => {
      context.dispose();
      if (late.kind === 'threw') fail(claimed, 'error', 'webhook handler threw', late.error, 'handler');
      else if (logger) emit(logger, 'info', 'webhook handler finished after its deadline', context.fields());
      return settle(claimed, late.kind === 'ok');
    });
    // A retry before the handlers settle gets 409 until the lease ends: hint at that, not at 1 s.
    const retryAfter = Math.max(1, Math.ceil((claimed.leaseEndsAt - clock.now()) / 1000));
    return failure('handler_timeout', { deliveryId, event: name, retryAfterSeconds: retryAfter });
  }

  /**
   * Completes (success) or releases (failure) the claim. Neither failure changes the answer: after a
   * success the delivery was handled, so it is acknowledged even if `complete` failed (a later copy
   * may run again once the lease ends: at-least-once, docs/receivers.md). Returns a promise only when
   * the store had to wait.
   */
  function settle(claimed: Claimed, success: boolean): Promise<void> | undefined {
    const { key } = claimed.delivery;
    const result = store.settle(key, claimed.token, success);
    if (!(result instanceof Promise)) {
      if (result !== true) settleFailed(claimed, success, result);
      return undefined;
    }
    return result.then((late) => {
      if (late !== true) settleFailed(claimed, success, late);
    });
  }

  function settleFailed(claimed: Claimed, success: boolean, result: false | StoreCallFailed): void {
    const phase = success ? 'complete' : 'release';
    const error =
      result instanceof StoreCallFailed
        ? result.cause
        : new WebhookError(
            'lease_lost',
            `The claim's lease (leaseMs ${leaseMs}) ended before ${phase}; another attempt may run this delivery too.`,
          );
    fail(claimed, 'warn', `dedup store ${phase} failed`, error, phase);
  }

  /**
   * Waits for `complete` / `release` at most until the handler deadline: a slow store must not hold
   * the answer past the sender's 10 s. The write goes on, and its failure is still reported.
   */
  function byDeadline(claimed: Claimed, settled: Promise<void>): Promise<void> {
    const { context } = claimed;
    return withinDeadline(clock, context.remainingMs(), settled, () => {
      if (logger)
        emit(logger, 'warn', 'answered at the deadline before the dedup store settled', context.fields());
    });
  }

  function processed(claimed: Claimed): ReceiveOutcome {
    const { delivery, context } = claimed;
    if (logger)
      emit(logger, 'debug', 'webhook processed', {
        ...context.fields(),
        durationMs: clock.now() - delivery.startedAt,
      });
    return acknowledged('processed', delivery.event.deliveryId, delivery.event.name);
  }

  return function processDelivery(delivery) {
    const claim = store.claim(delivery.key);
    // Written out rather than andThen: no closure per delivery on the path that never waits.
    return claim instanceof Promise
      ? claim.then((late) => claimedOrNot(delivery, late))
      : claimedOrNot(delivery, claim);
  };
}

function fields(delivery: Delivery): Record<string, string> {
  return {
    service: delivery.service,
    deliveryId: delivery.event.deliveryId,
    event: delivery.event.name,
    key: delivery.key,
  };
}
