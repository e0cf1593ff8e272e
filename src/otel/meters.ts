/**
 * The metrics of the OpenTelemetry entry: `messaging.process.duration` (histogram, seconds) for every
 * delivery whose handlers run here (not one shed past `maxInFlight`), `svc_webhooks.deliveries`
 * (counter) for every outcome, and `svc_webhooks.dead_letters` (counter) for the jobs a worker
 * dead-lettered. The instruments follow the meter provider registered when a delivery is recorded, so
 * a provider registered after the receiver was created is used; with none (the API's no-op meter)
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
import type { Outcome } from '../core/outcome.js';
import type { WebhookErrorCode } from '../shared/errors.js';
import { ATTR, DURATION_BUCKETS, METRIC, SCOPE, SCOPE_VERSION } from './names.js';

interface Instruments {
  readonly duration: Histogram;
  readonly deliveries: Counter;
  readonly deadLetters: Counter;
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
