/**
 * The clock a hand-off worker parses a job with: frozen at the delivery's receipt, so the opt-in
 * `maxEventAgeMs` check gives the same answer as it did at the receiver, however long the job queued.
 */
import type { Clock } from '../../shared/clock.js';

/** `clock` itself, or a clock whose `now()` is `receivedAt` when one is given. */
export function atReceipt(clock: Clock, receivedAt: number | undefined): Clock {
  return receivedAt === undefined ? clock : { now: () => receivedAt };
}
