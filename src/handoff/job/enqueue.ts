/**
 * The hand-off dispatch mode of the receive path (core/receive-path.ts): after verify, validate and the dedup key, the
 * delivery is written to the queue engine and acknowledged once the engine confirmed the write.
 * Nothing is acknowledged that was not persisted: a refusal, or no answer within the bound, is 503
 * with `Retry-After` (email-service §6 rule 4 and crm-service §6 rule 5 retry it).
 */
import { writeWithinBound } from '../../core/bounded-write.js';
import type { DispatchableEvent } from '../../core/handler-registry.js';
import type { ErrorHook } from '../../core/handler-types.js';
import { emit } from '../../core/logger.js';
import type { PipelineOptions } from '../../core/pipeline-options.js';
import { readHeaderString } from '../../core/read-header.js';
import type { HandOff, VerifiedDelivery } from '../../core/receive-path.js';
import { report } from '../../core/report.js';
import { routeOf } from '../../core/route-secrets.js';
import type { ServiceSpec } from '../../core/service-spec.js';
import { jobTraceparent } from '../../core/telemetry.js';
import { accepted, failed, type Verdict } from '../../core/verdict.js';
import { toBase64 } from './job-codec.js';
import { jobMac, type SignedFields } from './job-mac.js';
import { type EnqueueResult, HANDOFF_JOB_VERSION, type HandoffJob, type HandoffTarget } from './types.js';

/** The hand-off step of a receiver with a queue engine `target`: each delivery goes to {@link enqueueDelivery}. */
export function createHandOff(
  spec: ServiceSpec,
  options: PipelineOptions,
  hooks: readonly ErrorHook<DispatchableEvent>[],
  target: HandoffTarget,
): HandOff {
  return (delivery) => enqueueDelivery(spec, options, hooks, target, delivery);
}

/**
 * Writes the job for `delivery` to `target`, with its MAC under the receiver's first `handoffSecret`
 * or, without one, the secret that verified it: `queued` / `duplicate`, or `handoff_unavailable`.
 */
export async function enqueueDelivery(
  spec: ServiceSpec,
  options: PipelineOptions,
  hooks: readonly ErrorHook<DispatchableEvent>[],
  target: HandoffTarget,
  delivery: VerifiedDelivery,
): Promise<Verdict> {
  const { service, headerNames } = spec;
  const { event, dedupKey } = delivery;
  const { deliveryId, name } = event;
  const headers: Record<string, string> = {};
  for (const header of [headerNames.event, headerNames.deliveryId]) {
    const value = readHeaderString(delivery.headers, header);
    if (value !== undefined) headers[header] = value;
  }
  const signed: SignedFields = {
    v: HANDOFF_JOB_VERSION,
    service,
    deliveryId,
    event: name,
    dedupKey,
    receivedAt: delivery.receivedAt,
    secretIndex: delivery.secretIndex,
    headers,
  };
  // The trace of this request goes on in the worker (docs/observability.md); the MAC covers it.
  const traceparent = options.telemetry && jobTraceparent(options.telemetry, options.logger, service);
  if (traceparent !== undefined) signed.traceparent = traceparent;
  // The route goes with the job, under its MAC (context.route, routeTenant in the worker).
  signed.route = routeOf(delivery.route ?? {});
  const key = options.handoffSecrets[0] ?? options.secrets[delivery.secretIndex]!;
  const mac = await jobMac(key, signed, delivery.body);
  const job: HandoffJob = { ...signed, body: toBase64(delivery.body), mac };
  const fields = { service, deliveryId, event: name, dedupKey };
  let result: EnqueueResult | undefined;
  try {
    result = await writeWithinBound(
      options.clock,
      delivery.receivedAt,
      target.enqueueTimeoutMs ?? options.storeTimeoutMs,
      (signal) => target.enqueue(job, { signal }),
    );
  } catch (error) {
    report(
      { hooks, logger: options.logger },
      {
        level: 'error',
        message: 'hand-off enqueue failed',
        fields,
        error,
        phase: 'enqueue',
        event,
        deliveryId,
        dedupKey,
      },
    );
    return failed(service, 'handoff_unavailable', error, { deliveryId, event: name });
  }
  const kind = result === 'duplicate' ? 'duplicate' : 'queued';
  emit(options.logger, 'debug', `webhook ${kind} for a worker`, fields);
  return accepted(kind, service, deliveryId, name);
}
