/**
 * The metrics of the OpenTelemetry entry: `messaging.process.duration` (histogram, seconds) for every
 * delivery whose handlers run here (not one shed past `maxInFlight`), `svc_webhooks.deliveries`
 * (counter) for every outcome, `svc_webhooks.dead_letters` (counter) for the jobs a worker
 * dead-lettered, `svc_webhooks.drift` (counter) for each payload path or event this version does
 * not know, and the lag histograms (seconds: `svc_webhooks.event.age`, `.queue.wait`,
 * `.handler.duration`, `.end_to_end.duration`) for each outcome's lag fields. The instruments follow the meter provider registered when a delivery is recorded, so a
 * provider registered after the receiver was created is used; with none (the API's no-op meter)
 * nothing is built per delivery.
 */
import {
  type Attributes,
  type Counter,
  createNoopMeter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
} from '@opentelemetry/api';
import { rememberDrift } from '../core/drift-log.js';
import type { Outcome } from '../core/outcome.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import { ATTR, DURATION_BUCKETS, LAG_BUCKETS, METRIC, SCOPE, SCOPE_VERSION } from './names.js';

interface Instruments {
  readonly duration: Histogram;
  readonly deliveries: Counter;
  readonly deadLetters: Counter;
  readonly drift: Counter;
  readonly eventAge: Histogram;
  readonly queueWait: Histogram;
  readonly handlerDuration: Histogram;
  readonly endToEnd: Histogram;
}

/** What the telemetry records: an outcome, and a dead letter. */
export interface Meters {
  /** Whether a meter provider other than the API's no-op one is in use. */
  recording(): boolean;
  outcome(outcome: Outcome): void;
  deadLetter(facts: { readonly service: string; readonly code: WebhookErrorCode | undefined }): void;
}

export function createMeters(
  fixedProvider: MeterProvider | undefined,
  eventName: (name: string | undefined) => string | undefined,
): Meters {
  let provider: MeterProvider | undefined;
  let instruments: Instruments | undefined;

  /** The instruments of the provider in use now; undefined while it is the API's no-op one. */
  function current(): Instruments | undefined {
    const now = fixedProvider ?? metrics.getMeterProvider();
    if (now === provider) return instruments;
    provider = now;
    const meter = now.getMeter(SCOPE, SCOPE_VERSION);
    instruments =
      meter === createNoopMeter()
        ? undefined
        : {
            duration: meter.createHistogram(METRIC.processDuration, {
              description: 'Duration of processing one webhook delivery (handlers run here).',
              unit: 's',
              advice: { explicitBucketBoundaries: DURATION_BUCKETS },
            }),
            deliveries: meter.createCounter(METRIC.deliveries, {
              description: 'Webhook deliveries by service, event, operation, verdict and error code.',
              unit: '{delivery}',
            }),
            deadLetters: meter.createCounter(METRIC.deadLetters, {
              description: 'Hand-off jobs a worker dead-lettered.',
              unit: '{job}',
            }),
            drift: meter.createCounter(METRIC.drift, {
              description: 'Payload paths and events this version does not know, by service, event and path.',
              unit: '{path}',
            }),
            eventAge: lagHistogram(meter, METRIC.eventAge, 'From the signed event timestamp to its receipt.'),
            queueWait: lagHistogram(
              meter,
              METRIC.queueWait,
              "From a delivery's receipt to its handlers' start in a worker.",
            ),
            handlerDuration: lagHistogram(
              meter,
              METRIC.handlerDuration,
              "From a delivery's handlers' start to its verdict.",
            ),
            endToEnd: lagHistogram(
              meter,
              METRIC.endToEnd,
              'From the signed event timestamp to the delivery handled.',
            ),
          };
    return instruments;
  }

  return {
    recording: () => current() !== undefined,
    outcome(outcome) {
      const recorded = current();
      if (!recorded) return;
      const operation = outcome.mode === 'enqueue' ? 'send' : 'process';
      // Few attributes: the SDK sorts and serializes them on every record. `messaging.operation.name`
      // (required by the conventions) tells `send` from `process`; `.type` would repeat it.
      const attributes: Attributes = {
        [ATTR.system]: outcome.service,
        [ATTR.operationName]: operation,
        [ATTR.verdict]: outcome.kind,
      };
      const event = eventName(outcome.event);
      if (event !== undefined) attributes[ATTR.destination] = event;
      if (outcome.code !== undefined) attributes[ATTR.errorType] = outcome.code;
      recorded.deliveries.add(1, attributes);
      // A delivery shed past `maxInFlight` was not processed: a burst of them would fill the
      // histogram with zeros just when its tail matters.
      if (operation === 'process' && outcome.code !== 'overloaded')
        recorded.duration.record(outcome.durationMs / 1_000, attributes);
      if (outcome.drift) countDrift(recorded.drift, outcome.service, event, outcome.drift);
      recordLag(recorded, outcome, event);
    },
    deadLetter({ service, code }) {
      const recorded = current();
      if (!recorded) return;
      const attributes: Attributes = { [ATTR.system]: service };
      if (code !== undefined) attributes[ATTR.errorType] = code;
      recorded.deadLetters.add(1, attributes);
    },
  };
}

function lagHistogram(meter: Meter, name: string, description: string): Histogram {
  return meter.createHistogram(name, {
    description,
    unit: 's',
    advice: { explicitBucketBoundaries: LAG_BUCKETS },
  });
}

/** The outcome's lag (core/lag.ts), each span known in seconds, by service and (bounded) event. */
function recordLag(recorded: Instruments, outcome: Outcome, event: string | undefined): void {
  const { eventAgeMs, queueWaitMs, handlerMs, endToEndMs } = outcome;
  if (
    eventAgeMs === undefined &&
    queueWaitMs === undefined &&
    handlerMs === undefined &&
    endToEndMs === undefined
  )
    return;
  const attributes: Attributes = { [ATTR.system]: outcome.service };
  if (event !== undefined) attributes[ATTR.destination] = event;
  if (eventAgeMs !== undefined) {
    // A timestamp ahead of this host's clock counts as 0 s: flagged, so a skewed clock shows.
    const age = outcome.clockAhead ? { ...attributes, [ATTR.clockAhead]: true } : attributes;
    recorded.eventAge.record(eventAgeMs / 1_000, age);
  }
  if (queueWaitMs !== undefined) recorded.queueWait.record(queueWaitMs / 1_000, attributes);
  if (handlerMs !== undefined) recorded.handlerDuration.record(handlerMs / 1_000, attributes);
  if (endToEndMs !== undefined) recorded.endToEnd.record(endToEndMs / 1_000, attributes);
}

/**
 * One count per drifted path. Paths come from signed bodies: past the per-process bound of remembered
 * paths (core/drift.ts), a new one is counted as `_other` instead of making a new time series.
 */
function countDrift(counter: Counter, service: string, event: string | undefined, drift: readonly string[]) {
  for (const path of drift) {
    const known = rememberDrift(service, event ?? '', path) !== 'full';
    const attributes: Attributes = { [ATTR.system]: service, [ATTR.driftPath]: known ? path : '_other' };
    if (event !== undefined) attributes[ATTR.destination] = event;
    counter.add(1, attributes);
  }
}
