/**
 * Running a delivery's handlers: one after another in registration order; the first throw stops the
 * rest. The caller races the run against the delivery's deadline (deadline.ts) and keeps the claim
 * until it settles.
 */
import type { DeliveryContext } from './handler-context.js';
import type { WebhookHandler } from './handler-types.js';

/** How the handlers ended. */
export type Settled = { kind: 'ok' } | { kind: 'threw'; error: unknown };

const OK: Settled = Object.freeze({ kind: 'ok' });

/** Runs `handlers` in order; never rejects. */
export async function runHandlers<E>(
  handlers: readonly WebhookHandler<E>[],
  event: E,
  context: DeliveryContext,
): Promise<Settled> {
  try {
    for (let i = 0; i < handlers.length; i++) {
      const done = handlers[i]!(event, context);
      // A handler without `async` returns nothing: there is nothing to wait for.
      if (done !== undefined) await done;
    }
    return OK;
  } catch (error) {
    return { kind: 'threw', error };
  }
}
