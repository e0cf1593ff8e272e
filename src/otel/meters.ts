/**
 * The metrics of the OpenTelemetry entry: `messaging.process.duration` (histogram, seconds) for every
 * delivery whose handlers run here (not one shed past `maxInFlight`), `svc_webhooks.deliveries`
 * (counter) for every outcome, `svc_webhooks.dead_letters` (counter) for the jobs a worker
 * dead-lettered, and `svc_webhooks.drift` (counter) for each payload path or event this version does
 * not know. The instruments follow the meter provider registered when a delivery is recorded, so a
 * provider registered after the receiver was created is used; with none (the API's no-op meter)
 * nothing is built per delivery.
 */
import {
  type Attributes,
  type Counter,
  createNoopMeter,
  type Histogram,
  type MeterProvider,
  metrics,
} from '@opentelemetry/api';
import { rememberDrift } from '../core/drift-log.js';
import type { Outcome } from '../core/outcome.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import { ATTR, DURATION_BUCKETS, METRIC, SCOPE, SCOPE_VERSION } from './names.js';

interface Instruments {
  readonly duration: Histogram;
  readonly deliveries: Counter;
  readonly deadLetters: Counter;
  readonly drift: Counter;
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
