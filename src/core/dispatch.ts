/**
 * Running the handlers of a claimed delivery and settling its claim: complete on success (the next
 * copy is a duplicate), release on failure (the retry runs it again). At the deadline the request is
 * answered 503 while the claim stays held until the handlers settle. Written without per-request
 * closures on the synchronous path: this is the hot path.
 */

import type { SyncStoreOps } from '../dedup/sync-store.js';
import { abandonClaim } from './claim-within.js';
import { withinDeadline } from './deadline-timer.js';
import { WebhookError } from './errors.js';
import { DeliveryContext } from './handler-context.js';
import type { DispatchableEvent } from './handler-registry.js';
import type { ErrorHook, ErrorPhase, WebhookHandler } from './handler-types.js';
import { emit } from './logger.js';
import { acknowledged, failedWith } from './outcomes.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';
import { type RunResult, runHandlers } from './run-handlers.js';
import { completeWithin, releaseWithin, StoreCallFailed } from './store-calls.js';

/** A parsed delivery on its way to the dedup claim; once claimed, its token travels beside it. */
export interface PendingDelivery<E> {
  service: 'mail' | 'crm';
  event: E;
  handlers: readonly WebhookHandler<E>[];
  key: string;
  startedAt: number;
  signal: AbortSignal | undefined;
  /** Hand-off workers: the engine's attempt number, shown to handlers as `context.attempt`. */
  attempt?: number;
}

type Hooks = readonly ErrorHook<DispatchableEvent>[];

function fail(
  options: ResolvedOptions,
  hooks: Hooks,
  context: DeliveryContext,
  event: DispatchableEvent,
  level: 'warn' | 'error',
  message: string,
  error: unknown,
  phase: ErrorPhase,
): void {
  const { deliveryId, attemptKey: key } = context;
  report(hooks, options.logger, level, message, context.fields(), error, { phase, event, deliveryId, key });
}

/**
 * Completes (success) or releases (failure) the claim. Neither failure changes the answer: after a
 * success the delivery was handled, so it is acknowledged even if `complete` failed (a later copy may
 * run again once the lease ends: at-least-once, docs/receivers.md). `false` means the lease ended and
 * the write was fenced (`lease_lost`). Synchronous with a synchronous store.
 */
function settle(
  options: ResolvedOptions,
  hooks: Hooks,
  sync: SyncStoreOps | undefined,
  context: DeliveryContext,
  event: DispatchableEvent,
  token: string,
  success: boolean,
): void | Promise<void> {
  const { dedup, ttlMs, storeTimeoutMs } = options;
  const key = context.attemptKey;
  if (sync) {
    let result: boolean | StoreCallFailed;
    try {
      result = success ? sync.complete(key, token, ttlMs) : sync.release(key, token);
    } catch (error) {
      result = new StoreCallFailed(success ? 'complete' : 'release', error);
    }
    if (result !== true) settleFailed(options, hooks, context, event, success, result);
    return;
  }
  const pending = success
    ? completeWithin(dedup, key, token, ttlMs, storeTimeoutMs)
    : releaseWithin(dedup, key, token, storeTimeoutMs);
  return pending.then((result) => {
    if (result === true) return;
    // A release that failed may not have run: the claim would hold until its lease ends and the CRM
    // service's quick retries (§6 rule 5: 1 s, 2 s) would get 409. Abandoning the token drops the
    // lease whether the release ran or not, retried in the background (claim-within.ts).
    if (!success && result instanceof StoreCallFailed) {
      abandonClaim(dedup, key, token, options.leaseMs, storeTimeoutMs);
    }
    settleFailed(options, hooks, context, event, success, result);
  });
}

function settleFailed(
  options: ResolvedOptions,
  hooks: Hooks,
  context: DeliveryContext,
  event: DispatchableEvent,
  success: boolean,
  result: false | StoreCallFailed,
): void {
  const phase = success ? 'complete' : 'release';
  const error =
    result instanceof StoreCallFailed
      ? result.cause
      : new WebhookError(
          'lease_lost',
          `The claim's lease (leaseMs ${options.leaseMs}) ended before ${phase}; another attempt may run this delivery too.`,
        );
  fail(options, hooks, context, event, 'warn', `dedup store ${phase} failed`, error, phase);
}

/**
 * Waits for `complete` / `release` at most until the handler deadline: a slow store (your own, or one
 * given a `storeTimeoutMs` near `timeoutMs`) must not hold the answer past the sender's 10 s. The
 * write goes on, and its failure is still reported; the answer does not depend on it (see settle).
 */
function byDeadline(
  options: ResolvedOptions,
  context: DeliveryContext,
  settled: Promise<void>,
): Promise<void> {
  return withinDeadline(options.clock, context.timeLeftMs(), settled, () => {
    if (options.logger)
      emit(
        options.logger,
        'warn',
        'answered at the deadline before the dedup store settled',
        context.fields(),
      );
  });
}

/**
 * Runs the handlers of a claimed delivery and answers 200, 500 or 503: synchronously when the
 * handlers and the store are synchronous, else as a promise.
 */
export function dispatchClaimed<E extends DispatchableEvent>(
  options: ResolvedOptions,
  hooks: Hooks,
  sync: SyncStoreOps | undefined,
  claimed: PendingDelivery<E>,
  token: string,
): ReceiveOutcome | Promise<ReceiveOutcome> {
  const { event } = claimed;
  const context = new DeliveryContext(
    options.clock,
    claimed.startedAt + options.timeoutMs,
    claimed.service,
    event.name,
    event.deliveryId,
    claimed.key,
    claimed.signal,
    options.logger,
  );
  if (claimed.attempt !== undefined) context.attempt = claimed.attempt;
  const run = runHandlers(claimed.handlers, event, context, options.clock);
  if (!(run instanceof Promise)) return ran(options, hooks, sync, claimed, token, context, run, 0);
  // The claim was granted just now: its lease ends at most `leaseMs` from here. After a timeout the
  // claim is held until the handlers settle or the lease ends, so that is when a retry can succeed.
  const leaseEndsAt = options.clock.now() + options.leaseMs;
  return run.then((result) => ran(options, hooks, sync, claimed, token, context, result, leaseEndsAt));
}

function processed<E extends DispatchableEvent>(
  options: ResolvedOptions,
  claimed: PendingDelivery<E>,
  context: DeliveryContext,
): ReceiveOutcome {
  const { logger, clock } = options;
  if (logger)
    emit(logger, 'debug', 'webhook processed', {
      ...context.fields(),
      durationMs: clock.now() - claimed.startedAt,
    });
  return acknowledged('processed', claimed.event.deliveryId, claimed.event.name);
}

function ran<E extends DispatchableEvent>(
  options: ResolvedOptions,
  hooks: Hooks,
  sync: SyncStoreOps | undefined,
  claimed: PendingDelivery<E>,
  token: string,
  context: DeliveryContext,
  run: RunResult,
  leaseEndsAt: number,
): ReceiveOutcome | Promise<ReceiveOutcome> {
  const { logger, timeoutMs, clock } = options;
  const { event } = claimed;
  const { deliveryId, name } = event;
  if (run.kind === 'ok') {
    context.dispose();
    const settled = settle(options, hooks, sync, context, event, token, true);
    return settled
      ? byDeadline(options, context, settled).then(() => processed(options, claimed, context))
      : processed(options, claimed, context);
  }
  if (run.kind === 'threw') {
    context.dispose();
    fail(options, hooks, context, event, 'error', 'webhook handler threw', run.error, 'handler');
    const settled = settle(options, hooks, sync, context, event, token, false);
    const outcome = failedWith('handler_failed', deliveryId, name);
    return settled ? byDeadline(options, context, settled).then(() => outcome) : outcome;
  }
  // Timed out: answer now (before the sender's 10 s), keep the claim until the handlers settle so a
  // retry meanwhile gets 409 and the handlers never run twice at once.
  const timeout = new WebhookError('handler_timeout', `Handlers still running after ${timeoutMs} ms.`);
  fail(options, hooks, context, event, 'warn', 'webhook handler timed out', timeout, 'timeout');
  void run.settled.then((late) => {
    context.dispose();
    if (late.kind === 'threw')
      fail(options, hooks, context, event, 'error', 'webhook handler threw', late.error, 'handler');
    else if (logger) emit(logger, 'info', 'webhook handler finished after its deadline', context.fields());
    return settle(options, hooks, sync, context, event, token, late.kind === 'ok');
  });
  // A retry before the handlers settle gets 409 until the lease ends: hint at that, not at 1 s.
  const retryAfter = Math.max(1, Math.ceil((leaseEndsAt - clock.now()) / 1000));
  return failedWith('handler_timeout', deliveryId, name, retryAfter);
}
