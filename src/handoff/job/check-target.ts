/**
 * Checks the `handoff` receiver option when the receiver is created: a misconfiguration throws there,
 * not on the first delivery.
 */
import { WebhookError } from '../../shared/errors.js';
import type { HandoffTarget } from './types.js';

/**
 * Largest delivery body a hand-off job carries, in bytes: 6 MiB, 6× the default `maxBodyBytes`. A
 * receiver with `handoff` refuses a larger `maxBodyBytes` when it is created (check-target.ts), so it
 * never acknowledges a delivery whose job a worker would refuse.
 */
export const MAX_HANDOFF_BODY_BYTES = 6 * 1_048_576;

/**
 * `target` when it is a usable {@link HandoffTarget} or undefined; else `options_invalid`, also for a
 * `maxBodyBytes` above what a job can carry (a worker would refuse the job of a delivery already
 * acknowledged).
 */
export function checkHandoffTarget(
  factory: string,
  target: unknown,
  maxBodyBytes: number,
): HandoffTarget | undefined {
  if (target === undefined) return undefined;
  const candidate = target as Partial<HandoffTarget> | null;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.enqueue !== 'function') {
    throw new WebhookError(
      'options_invalid',
      `${factory}: handoff must be a hand-off target with an enqueue(job) method (e.g. createBullmqHandoff).`,
    );
  }
  const { enqueueTimeoutMs } = candidate;
  if (enqueueTimeoutMs !== undefined && (!Number.isSafeInteger(enqueueTimeoutMs) || enqueueTimeoutMs <= 0)) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: handoff.enqueueTimeoutMs must be a positive whole number (got ${String(enqueueTimeoutMs)}).`,
    );
  }
  const limit = handoffBodyLimit(candidate);
  if (maxBodyBytes > limit) {
    throw new WebhookError(
      'options_invalid',
      `${factory}: maxBodyBytes (${maxBodyBytes}) is above ${limit}, the largest body a hand-off job carries${limit < MAX_HANDOFF_BODY_BYTES ? ' on this queue engine' : ''}.`,
    );
  }
  return candidate as HandoffTarget;
}

/**
 * The largest body a job of `target` carries: its own `maxBodyBytes` when it states a smaller one
 * (an engine with a message size limit), else {@link MAX_HANDOFF_BODY_BYTES}.
 */
export function handoffBodyLimit(target: unknown): number {
  const own = (target as Partial<HandoffTarget> | null | undefined)?.maxBodyBytes;
  return Number.isSafeInteger(own) && (own as number) > 0
    ? Math.min(own as number, MAX_HANDOFF_BODY_BYTES)
    : MAX_HANDOFF_BODY_BYTES;
}
