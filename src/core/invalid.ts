/**
 * Verified deliveries that do not parse or validate. They are never dropped silently: `onInvalid`
 * hooks get the raw bytes (awaited, so a hook can store them before the answer), or, without such a
 * hook, `onError` and the logger do. The sender gets 400 and its usual retries. The hooks are awaited
 * only until the handler deadline (`timeoutMs` from the request's arrival): a hung hook must not
 * leave the sender without an answer (it gives up at 10 s, email-service §6 rule 3, crm-service §6
 * rule 4, and counts that as a failure anyway).
 */

import { isWebhookError, WebhookError } from '../shared/errors.js';
import { withinDeadline } from './deadline-timer.js';
import type { DispatchableEvent, HandlerRegistry } from './handler-registry.js';
import type { InvalidDelivery, InvalidHook } from './handler-types.js';
import { failure } from './outcomes.js';
import { readHeaderString } from './read-header.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { HeadersInput, ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';
import type { ServiceSpec } from './service-spec.js';

/** The parse failure of a verified body. */
export interface ParseFailure {
  body: Uint8Array;
  headers: HeadersInput;
  error: unknown;
  secretIndex: number;
  /** When the request arrived (the receiver's clock); the hooks' deadline counts from it. Default: now. */
  startedAt?: number;
}

/** Reports a verified but invalid delivery and answers with its error (400 for parse errors). */
export async function handleInvalid<E extends DispatchableEvent>(
  spec: ServiceSpec<E>,
  options: ResolvedOptions,
  registry: HandlerRegistry,
  problem: ParseFailure,
): Promise<ReceiveOutcome> {
  const { body, headers, error, secretIndex } = problem;
  const { service, headerNames } = spec;
  const { logger, clock, timeoutMs } = options;
  const deliveryId = readHeaderString(headers, headerNames.deliveryId);
  const event = readHeaderString(headers, headerNames.event);
  const fields = { service, deliveryId, event, code: isWebhookError(error) ? error.code : 'internal_error' };
  if (!isWebhookError(error)) {
    // A parser bug, not bad input: 500 so the sender retries once it is fixed.
    report(registry.errorHooks, logger, 'error', 'webhook parser failed', fields, error, {
      phase: 'internal',
      deliveryId,
      body,
    });
    return failure('internal_error', { deliveryId, event });
  }
  const invalid = error;
  if (registry.invalidHooks.length === 0) {
    report(registry.errorHooks, logger, 'warn', 'verified webhook failed validation', fields, invalid, {
      phase: 'invalid',
      deliveryId,
      body,
    });
  } else {
    report([], logger, 'warn', 'verified webhook failed validation', fields, invalid, {
      phase: 'invalid',
      deliveryId,
    });
    const hookFailed = (hookError: unknown): void =>
      report(registry.errorHooks, logger, 'error', 'onInvalid hook threw', fields, hookError, {
        phase: 'invalid_hook',
        deliveryId,
        body,
      });
    // A rare path (verified but invalid), so the controller is made for every such delivery.
    const controller = new AbortController();
    const delivery: InvalidDelivery = {
      body,
      headers,
      error: invalid,
      deliveryId,
      event,
      secretIndex,
      signal: controller.signal,
    };
    const hooks = runInvalidHooks(registry.invalidHooks, delivery, hookFailed);
    if (hooks) {
      const deadline = (problem.startedAt ?? clock.now()) + timeoutMs;
      const ended = await withinDeadline(clock, Math.max(0, deadline - clock.now()), hooks, () => false);
      if (ended === false) {
        controller.abort(
          new WebhookError(
            'handler_timeout',
            'The handler deadline passed; the sender stops waiting at 10 s.',
          ),
        );
        // Answer now; the hooks keep running and what they throw later is still reported.
        report(
          registry.errorHooks,
          logger,
          'warn',
          'onInvalid hook timed out',
          fields,
          new WebhookError('handler_timeout', `onInvalid hooks still running after ${timeoutMs} ms.`),
          { phase: 'invalid_hook', deliveryId, body },
        );
      }
    }
  }
  return failure(invalid, { deliveryId, event });
}

/**
 * Runs the hooks one after another; each throw is reported and the next hook still runs. Returns
 * `undefined` when every hook was synchronous, else a promise (that never rejects) of their end.
 */
function runInvalidHooks(
  hooks: readonly InvalidHook[],
  delivery: InvalidDelivery,
  hookFailed: (error: unknown) => void,
): Promise<true> | undefined {
  for (let i = 0; i < hooks.length; i++) {
    let returned: unknown;
    try {
      returned = hooks[i]!(delivery);
    } catch (error) {
      hookFailed(error);
      continue;
    }
    if (isThenable(returned)) return rest(returned, hooks, i + 1, delivery, hookFailed);
  }
  return undefined;
}

async function rest(
  pending: PromiseLike<unknown>,
  hooks: readonly InvalidHook[],
  next: number,
  delivery: InvalidDelivery,
  hookFailed: (error: unknown) => void,
): Promise<true> {
  try {
    await pending;
  } catch (error) {
    hookFailed(error);
  }
  for (let i = next; i < hooks.length; i++) {
    try {
      await hooks[i]!(delivery);
    } catch (error) {
      hookFailed(error);
    }
  }
  return true;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}
