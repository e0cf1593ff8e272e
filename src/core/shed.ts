/**
 * Shedding load (option `maxInFlight`): past the cap on deliveries in flight, a request is answered
 * 503 `overloaded` at once, before its body is read, so the deliveries already accepted keep the
 * event loop to themselves instead of all of them slowing down together past the senders' 10 s
 * (email-service §6 rule 3, crm-service §6 rule 4). The count itself is a counter of the receive
 * path (receive-path.ts); this module is what a request past the cap costs.
 */
import type { Clock } from '../shared/clock.js';
import { emit, type LogSink } from './logger.js';
import { readHeaderString } from './read-header.js';
import type { HeadersInput } from './receiver-types.js';
import { failed, pipelineError, type Verdict } from './verdict.js';

/** At most one warning a second: a burst shed is a line a second in the log, not a line a request. */
const WARN_EVERY_MS = 1_000;

/** What the receive path needs to shed: the receiver's service, its cap, its log and its clock. */
export interface ShedTerms {
  readonly service: string;
  /** The lowercase delivery-id header, read (unverified) for the verdict's facts. */
  readonly deliveryIdHeader: string;
  readonly maxInFlight: number;
  readonly logger: LogSink | undefined;
  readonly clock: Clock;
}

/**
 * The verdict of a request past the cap: failed `overloaded`, answered 503 with `Retry-After: 1`
 * at the edge, with the delivery id its header claims (the body is never read). Warns at most once
 * a second, with how many were shed since the last warning.
 */
export function createShed(terms: ShedTerms): (headers: HeadersInput) => Verdict {
  const { service, deliveryIdHeader, maxInFlight, logger, clock } = terms;
  // One error for every shed request of the receiver: its stack would say nothing new each time.
  const error = pipelineError('overloaded');
  let shedSinceWarning = 0;
  let warnedAt = Number.NEGATIVE_INFINITY;
  return (headers) => {
    shedSinceWarning++;
    const now = clock.now();
    if (now - warnedAt >= WARN_EVERY_MS) {
      emit(logger, 'warn', 'webhook deliveries shed: maxInFlight reached', {
        service,
        maxInFlight,
        shed: shedSinceWarning,
      });
      warnedAt = now;
      shedSinceWarning = 0;
    }
    return failed(service, 'overloaded', error, {
      deliveryId: readHeaderString(headers, deliveryIdHeader),
    });
  };
}
