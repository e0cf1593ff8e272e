/**
 * Verified deliveries that do not parse or validate. They are never dropped silently: `onInvalid`
 * hooks get the raw bytes (awaited, so a hook can store them before the answer), or, without such a
 * hook, `onError` and the logger do. The sender gets 400 and its usual retries.
 */
import { isWebhookError } from './errors.js';
import type { DispatchableEvent, HandlerRegistry } from './handler-registry.js';
import { failed, failedWith } from './outcomes.js';
import type { ServiceSpec } from './pipeline.js';
import { readHeaderString } from './read-header.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { HeadersInput, ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';

/** The parse failure of a verified body. */
export interface ParseFailure {
  body: Uint8Array;
  headers: HeadersInput;
  error: unknown;
  secretIndex: number;
}

/** Reports a verified but invalid delivery and answers with its error (400 for parse errors). */
export async function handleInvalid<E extends DispatchableEvent>(
  spec: ServiceSpec<E>,
  options: ResolvedOptions,
  registry: HandlerRegistry,
  failure: ParseFailure,
): Promise<ReceiveOutcome> {
  const { body, headers, error, secretIndex } = failure;
  const { service, headerNames } = spec;
  const { logger } = options;
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
    return failedWith('internal_error', deliveryId, event);
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
    for (const hook of registry.invalidHooks) {
      try {
        await hook({ body, headers, error: invalid, deliveryId, event, secretIndex });
      } catch (hookError) {
        report(registry.errorHooks, logger, 'error', 'onInvalid hook threw', fields, hookError, {
          phase: 'invalid_hook',
          deliveryId,
          body,
        });
      }
    }
  }
  return failed(invalid, deliveryId, event);
}
