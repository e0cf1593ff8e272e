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
import type { Clock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { type ClaimSettings, claimKey, settleClaim } from './claims.js';
import { createDeadline, TIMED_OUT } from './deadline.js';
import { DeliveryContext } from './handler-context.js';
import type { DispatchableEvent } from './handler-registry.js';
import type { ErrorHook, ErrorPhase, WebhookHandler } from './handler-types.js';
import { keepLease } from './lease.js';
import { emit, type Logger } from './logger.js';
import { report } from './report.js';
import { runHandlers } from './run-handlers.js';
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
  /** Aborted when whoever waits for the verdict gave up (the sender disconnected, a worker stops). */
  signal: AbortSignal | undefined;
  /** Hand-off workers: the queue engine's attempt number, shown to handlers as `context.attempt`. */
  attempt?: number | undefined;
}

/** What processing needs from the receiver. */
export interface ProcessSettings extends ClaimSettings {
  readonly clock: Clock;
  readonly logger: Logger | undefined;
  readonly hooks: readonly ErrorHook<DispatchableEvent>[];
}

function retryAfter(clock: Clock, leaseEndsAt: number): number {
  return Math.max(1_000, leaseEndsAt - clock.now());
}

/** Claims, runs and settles one delivery; never rejects. */
export async function processDelivery(settings: ProcessSettings, delivery: Delivery): Promise<Verdict> {
  const { clock, logger, hooks, leaseMs } = settings;
  const { service, event, key, timeoutMs } = delivery;
  const { deliveryId, name } = event;
  const facts = { deliveryId, event: name };
  const fields = () => ({ service, deliveryId, event: name, dedupKey: key });
  const deadline = createDeadline(clock, delivery.startedAt + timeoutMs);
  try {
    const claim = await claimKey(settings, key, deadline);
    if (claim.status === 'failed') {
      // Fail closed: no handler runs without a claim.
      report(hooks, logger, 'error', 'dedup store claim failed', fields(), claim.error, {
        phase: 'claim',
        event,
        deliveryId,
        dedupKey: key,
      });
      return failed(service, 'store_unavailable', claim.error, facts);
    }
    if (claim.status === 'completed') {
      if (logger) emit(logger, 'debug', 'webhook duplicate: already completed', fields());
      return accepted('duplicate', service, deliveryId, name);
    }
    if (claim.status === 'in_progress') {
      if (logger) emit(logger, 'info', 'webhook in progress elsewhere', fields());
      return failed(service, 'delivery_in_progress', undefined, facts, retryAfter(clock, claim.leaseEndsAt));
    }
    const { token } = claim;
    const leaseEndsAt = clock.now() + leaseMs;
    const context = new DeliveryContext(
      clock,
      deadline.at,
      service,
      name,
      deliveryId,
      key,
      delivery.signal,
      logger,
    );
    if (delivery.attempt !== undefined) context.attempt = delivery.attempt;
    const fail = (level: 'warn' | 'error', message: string, error: unknown, phase: ErrorPhase) =>
      report(hooks, logger, level, message, context.fields(), error, {
        phase,
        event,
        deliveryId,
        dedupKey: key,
      });
    let lost = false;
    const settle = async (success: boolean): Promise<void> => {
      const settled = await settleClaim(settings, key, token, success);
      if (settled === true || (settled === false && lost)) return; // a lost lease is reported once
      const phase = success ? 'complete' : 'release';
      const error =
        settled === false
          ? new WebhookError(
              'lease_lost',
              `The claim's lease (leaseMs ${leaseMs}) ended before ${phase}; another attempt may run this delivery too.`,
            )
          : settled.error;
      fail('warn', `dedup store ${phase} failed`, error, phase);
    };

    // The lease is kept until the handlers settle, also past the deadline: a retry meanwhile gets
    // delivery_in_progress instead of running them a second time alongside.
    const stopLease = keepLease(settings, key, token, context.fields(), () => {
      lost = true;
      const error = new WebhookError(
        'lease_lost',
        `The claim's lease (leaseMs ${leaseMs}) ended while the handlers ran; another attempt may run this delivery too.`,
      );
      context.loseLease(error);
      fail('error', 'webhook claim lost while its handlers ran', error, 'lease');
    });
    const run = runHandlers(delivery.handlers, event, context);
    const ran = await deadline.race(run);
    if (ran === TIMED_OUT) {
      // Answer now (before the sender's 10 s); keep the claim until the handlers settle.
      context.expire();
      const timeout = new WebhookError('handler_timeout', `Handlers still running after ${timeoutMs} ms.`);
      fail('warn', 'webhook handler timed out', timeout, 'timeout');
      void run.then((late) => {
        stopLease();
        context.dispose();
        if (late.kind === 'threw') fail('error', 'webhook handler threw', late.error, 'handler');
        else emit(logger, 'info', 'webhook handler finished after its deadline', context.fields());
        return settle(late.kind === 'ok');
      });
      // A retry before the handlers settle gets delivery_in_progress until the lease ends.
      return failed(service, 'handler_timeout', timeout, facts, retryAfter(clock, leaseEndsAt));
    }
    stopLease();
    context.dispose();
    if (ran.kind === 'threw') fail('error', 'webhook handler threw', ran.error, 'handler');
    // A slow store must not hold the answer past the deadline: the write goes on, its failure is
    // still reported.
    // The receiver's own store (bound 0) cannot hang; any other is raced against the deadline.
    const settling = settle(ran.kind === 'ok');
    const settled = settings.storeTimeoutMs === 0 ? await settling : await deadline.race(settling);
    if (settled === TIMED_OUT)
      emit(logger, 'warn', 'answered at the deadline before the dedup store settled', context.fields());
    if (ran.kind === 'threw') return failed(service, 'handler_failed', ran.error, facts);
    if (logger)
      emit(logger, 'debug', 'webhook processed', {
        ...context.fields(),
        durationMs: clock.now() - delivery.startedAt,
      });
    return accepted('handled', service, deliveryId, name);
  } finally {
    deadline.cancel();
  }
}
