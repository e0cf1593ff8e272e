/**
 * Running a delivery's handlers against its deadline. Handlers run one after another in registration
 * order; the first throw stops the rest. Synchronous handlers finish without a timer or a promise.
 * At the deadline the caller answers at once while the handlers keep going (`settled`), so the claim
 * can still be completed or released when they end. The deadline runs on the receiver's clock when it
 * schedules (src/core/deadline-timer.ts), so a virtual clock can move a slow handler past it.
 */
import type { Clock } from '../shared/clock.js';
import { withinDeadline } from './deadline-timer.js';
import type { DeliveryContext } from './handler-context.js';
import type { WebhookHandler } from './handler-types.js';

/** How handlers ended. */
export type Settled = { kind: 'ok' } | { kind: 'threw'; error: unknown };

/** How the handlers ended by the deadline. */
export type RunResult = Settled | { kind: 'timeout'; settled: Promise<Settled> };

const OK: Settled = Object.freeze({ kind: 'ok' });

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

async function finish<E>(
  pending: PromiseLike<unknown>,
  handlers: readonly WebhookHandler<E>[],
  next: number,
  event: E,
  context: DeliveryContext,
): Promise<Settled> {
  try {
    await pending;
    for (let i = next; i < handlers.length; i++) await handlers[i]!(event, context);
    return OK;
  } catch (error) {
    return { kind: 'threw', error };
  }
}

/** Runs `handlers` until they settle or the context's deadline passes, whichever is first. */
export function runHandlers<E>(
  handlers: readonly WebhookHandler<E>[],
  event: E,
  context: DeliveryContext,
  clock: Clock,
): RunResult | Promise<RunResult> {
  let work: Promise<Settled> | undefined;
  try {
    for (let i = 0; i < handlers.length; i++) {
      const returned = handlers[i]!(event, context);
      if (isThenable(returned)) {
        work = finish(returned, handlers, i + 1, event, context);
        break;
      }
    }
  } catch (error) {
    return { kind: 'threw', error };
  }
  if (!work) return OK;
  const settled = work;
  return withinDeadline<Settled, RunResult>(clock, context.remainingMs(), settled, () => {
    context.expire();
    return { kind: 'timeout', settled };
  });
}
