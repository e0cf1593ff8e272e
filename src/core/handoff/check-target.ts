/**
 * Checks the `handoff` receiver option when the receiver is created: a misconfiguration throws there,
 * not on the first delivery.
 */
import { WebhookError } from '../../shared/errors.js';
import type { HandoffTarget } from './types.js';

/** `target` when it is a usable {@link HandoffTarget} or undefined; else `options_invalid`. */
export function checkHandoffTarget(factory: string, target: unknown): HandoffTarget | undefined {
  if (target === undefined) return undefined;
  const candidate = target as Partial<HandoffTarget> | null;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.enqueue !== 'function') {
    throw new WebhookError(
      'options_invalid',
      `${factory}: handoff must be a hand-off target with an enqueue(job) method (e.g. createBullmqHandoff).`,
    );
  }
  const { timeoutMs } = candidate;
  if (timeoutMs !== undefined && (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: handoff.timeoutMs must be a positive whole number (got ${String(timeoutMs)}).`,
    );
  }
  return candidate as HandoffTarget;
}
