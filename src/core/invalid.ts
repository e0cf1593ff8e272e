/**
 * Verified deliveries that do not parse or validate. They are never dropped silently: `onInvalid`
 * hooks get the raw bytes (awaited, so a hook can store them before the answer), or, without such a
 * hook, `onError` and the logger do. The verdict is a refusal with the parser's code (the sender gets
 * 400 and its usual retries). The hooks are awaited only until the delivery's deadline: a hung hook
 * must not leave the sender without an answer (it gives up at 10 s, email-service §6 rule 3,
 * crm-service §6 rule 4, and counts that as a failure anyway).
 */
import { isWebhookError, WebhookError } from '../shared/errors.js';
import { createDeadline, TIMED_OUT } from './deadline.js';
import type { HandlerRegistry } from './handler-registry.js';
import type { InvalidDelivery, InvalidHook } from './handler-types.js';
import type { PipelineOptions } from './pipeline-options.js';
import { readHeaderString } from './read-header.js';
import type { HeadersInput } from './receiver-types.js';
import { report } from './report.js';
import type { ServiceSpec } from './service-spec.js';
import { failed, type Verdict, verdictOfError } from './verdict.js';

/** The parse failure of a verified body. */
export interface ParseFailure {
  body: Uint8Array;
  headers: HeadersInput;
  error: unknown;
  secretIndex: number;
  /** When the request arrived (the receiver's clock); the hooks' deadline counts from it. */
  startedAt: number;
}

/** Reports a verified but invalid delivery and returns its verdict. Never rejects. */
export async function handleInvalid(
  spec: ServiceSpec,
  options: PipelineOptions,
  registry: HandlerRegistry,
  problem: ParseFailure,
): Promise<Verdict> {
  const { body, headers, error, secretIndex } = problem;
  const { service, headerNames } = spec;
  const { logger, clock, timeoutMs } = options;
  const deliveryId = readHeaderString(headers, headerNames.deliveryId);
  const event = readHeaderString(headers, headerNames.event);
  const facts = { deliveryId, event };
  const fields = { service, deliveryId, event, code: isWebhookError(error) ? error.code : 'internal_error' };
  const to = { hooks: registry.errorHooks, logger };
  if (!isWebhookError(error)) {
    // A parser bug, not bad input: a failure, so the sender retries once it is fixed.
    report(to, {
      level: 'error',
      message: 'webhook parser failed',
      fields,
      error,
      phase: 'internal',
      deliveryId,
      body,
    });
    return failed(service, 'internal_error', error, facts);
  }
  // Refused, but a failure for `repair_failed` (the app's bug: the sender's retry may meet the fix).
  const verdict = verdictOfError(service, error, facts);
  const invalidHooks = registry.invalidHooks;
  if (invalidHooks.length === 0) {
    report(to, {
      level: 'warn',
      message: 'verified webhook failed validation',
      fields,
      error,
      phase: 'invalid',
      deliveryId,
      body,
    });
    return verdict;
  }
  report(
    { hooks: [], logger },
    {
      level: 'warn',
      message: 'verified webhook failed validation',
      fields,
      error,
      phase: 'invalid',
      deliveryId,
    },
  );
  const hookFailed = (hookError: unknown): void =>
    report(to, {
      level: 'error',
      message: 'onInvalid hook threw',
      fields,
      error: hookError,
      phase: 'invalid_hook',
      deliveryId,
      body,
    });
  const controller = new AbortController();
  const delivery: InvalidDelivery = {
    body,
    headers,
    error,
    deliveryId,
    event,
    secretIndex,
    signal: controller.signal,
  };
  const deadline = createDeadline(clock, problem.startedAt + timeoutMs);
  const ended = await deadline.race(runInvalidHooks(invalidHooks, delivery, hookFailed));
  deadline.cancel();
  if (ended === TIMED_OUT) {
    controller.abort(
      new WebhookError('handler_timeout', 'The handler deadline passed; the sender stops waiting at 10 s.'),
    );
    // Answer now; the hooks keep running and what they throw later is still reported.
    report(to, {
      level: 'warn',
      message: 'onInvalid hook timed out',
      fields,
      error: new WebhookError('handler_timeout', `onInvalid hooks still running after ${timeoutMs} ms.`),
      phase: 'invalid_hook',
      deliveryId,
      body,
    });
  }
  return verdict;
}

/** Runs the hooks one after another; each throw is reported and the next hook still runs. */
async function runInvalidHooks(
  hooks: readonly InvalidHook[],
  delivery: InvalidDelivery,
  hookFailed: (error: unknown) => void,
): Promise<void> {
  for (const hook of hooks) {
    try {
      await hook(delivery);
    } catch (error) {
      hookFailed(error);
    }
  }
}
