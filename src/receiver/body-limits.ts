/**
 * The body limits of the receivers this library built, for an adapter that must read a body before
 * the receiver is called (Nest's body reader runs ahead of Nest's parsers). Kept beside the receiver,
 * not on it: `WebhookReceiverLike` stays what adapters hand a request to.
 */

import type { BodyLimits } from '../core/receiver-types.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../shared/body-errors.js';
import { DEFAULT_MAX_BODY_BYTES } from './receiver-options.js';

const limits = new WeakMap<object, BodyLimits>();

/** Records `receiver`'s limits (createReceiver does, once). */
export function rememberBodyLimits(receiver: object, maxBodyBytes: number, bodyTimeoutMs: number): void {
  limits.set(receiver, Object.freeze({ maxBodyBytes, bodyTimeoutMs }));
}

/** `receiver`'s limits; the defaults for a receiver built elsewhere. */
export function bodyLimitsOf(receiver: object): BodyLimits {
  return (
    limits.get(receiver) ?? { maxBodyBytes: DEFAULT_MAX_BODY_BYTES, bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS }
  );
}
