/**
 * The opt-in freshness check on the signed timestamp of an event (`maxEventAgeMs`). The specs sign
 * the body only and say nothing about how old a delivery may be, so a captured body stays valid
 * forever; refusing old timestamps bounds how long a replay works. Off unless configured.
 */
import type { Clock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';

/**
 * How far in the future a signed timestamp may lie when `maxEventAgeMs` is set: 5 minutes of clock
 * skew between the sender and this host. Later timestamps are refused with `event_in_future`.
 */
export const EVENT_CLOCK_SKEW_MS = 300_000;

/** Throws `options_invalid` unless `maxEventAgeMs` is absent or a positive whole number. */
export function checkMaxEventAge(where: string, maxEventAgeMs: unknown): number | undefined {
  if (maxEventAgeMs === undefined) return undefined;
  if (typeof maxEventAgeMs !== 'number' || !Number.isSafeInteger(maxEventAgeMs) || maxEventAgeMs <= 0) {
    throw new WebhookError(
      'options_invalid',
      `${where}: maxEventAgeMs must be a positive whole number of milliseconds (got ${String(maxEventAgeMs)}).`,
    );
  }
  return maxEventAgeMs;
}

/**
 * Refuses a signed ISO 8601 `timestamp` older than `maxEventAgeMs` (`event_too_old`) or more than
 * {@link EVENT_CLOCK_SKEW_MS} ahead of `clock` (`event_in_future`). The caller has validated the
 * timestamp's form; one that still does not parse is `invalid_payload`.
 */
export function assertFresh(timestamp: string, maxEventAgeMs: number, clock: Clock, service: string): void {
  const at = Date.parse(timestamp);
  if (Number.isNaN(at)) {
    throw new WebhookError(
      'invalid_payload',
      `Invalid ${service} payload: timestamp is not an ISO 8601 time.`,
    );
  }
  const age = clock.now() - at;
  if (age > maxEventAgeMs) {
    throw new WebhookError(
      'event_too_old',
      `The ${service} event's signed timestamp is ${Math.round(age / 1000)} s old, more than maxEventAgeMs (${maxEventAgeMs} ms).`,
    );
  }
  if (-age > EVENT_CLOCK_SKEW_MS) {
    throw new WebhookError(
      'event_in_future',
      `The ${service} event's signed timestamp is ${Math.round(-age / 1000)} s in the future, more than the ${EVENT_CLOCK_SKEW_MS / 1000} s of clock skew allowed; check this host's clock.`,
    );
  }
}
