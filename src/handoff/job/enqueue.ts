/**
 * The hand-off dispatch mode of the receive path (core/receive-path.ts): after verify, validate and the dedup key, the
 * delivery is written to the queue engine and acknowledged once the engine confirmed the write.
 * Nothing is acknowledged that was not persisted: a refusal, or no answer within the bound, is 503
 * with `Retry-After` (email-service §6 rule 4 and crm-service §6 rule 5 retry it).
 */
import { createDeadline, TIMED_OUT } from '../../core/deadline.js';
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
import { rememberJobBody, wantsParsedEvent } from './job-body.js';
import { toBase64 } from './job-codec.js';
import { jobMac, type SignedFields } from './job-mac.js';
import {
  type EnqueueResult,
  HANDOFF_JOB_VERSION,
  type HandoffJob,
  type HandoffRunner,
  type HandoffTarget,
} from './types.js';

/**
 * The hand-off step of a receiver with `target`: each delivery goes to {@link enqueueDelivery}, with
 * `runner` (the receiver) for a target that runs deliveries in the request (`deliver`).
 */
export function createHandOff(
  spec: ServiceSpec,
  options: PipelineOptions,
  hooks: readonly ErrorHook<DispatchableEvent>[],
  target: HandoffTarget,
  runner?: HandoffRunner,
): HandOff {
  return (delivery) => enqueueDelivery(spec, options, hooks, target, delivery, runner);
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
  runner?: HandoffRunner,
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
  // The route goes with the job, under its MAC (context.route, routeTenant in the worker). Not yet to
  // the database inbox (its targets read the parse or deliver in the request), whose rows have no
  // column for it: a row's job must verify as it was signed.
  if (!wantsParsedEvent(target) && typeof target.deliver !== 'function')
    signed.route = routeOf(delivery.route);
  const key = options.handoffSecrets[0] ?? options.secrets[delivery.secretIndex]!;
  const mac = await jobMac(key, signed, delivery.body);
  const job: HandoffJob = { ...signed, body: toBase64(delivery.body), mac };
  // The database inbox reads the event's fields from the parse above instead of parsing again; no
  // other target is handed the parse, which a job held while its queue is away would keep alive.
  rememberJobBody(job, delivery.body, delivery.quarantine || !wantsParsedEvent(target) ? undefined : event);
  const timeoutMs = target.enqueueTimeoutMs ?? options.storeTimeoutMs;
  const controller = new AbortController();
  const fields = { service, deliveryId, event: name, dedupKey };
  const unavailable = (error: unknown): Verdict => {
    report(
      { hooks, logger: options.logger },
      {
        level: 'error',
        message: 'hand-off enqueue failed',
        fields,
        error,
        phase: 'enqueue',
        ...(delivery.quarantine ? {} : { event }),
        deliveryId,
        dedupKey,
      },
    );
    return failed(service, 'handoff_unavailable', error, { deliveryId, event: name });
  };
  if (target.deliver && runner && !delivery.quarantine) {
    // Direct mode of a target that runs it here (the database inbox): its verdict is the answer.
    try {
      return await target.deliver(job, runner);
    } catch (error) {
      return unavailable(error);
    }
  }
  // The bound counts from the delivery's receipt (its body read, on the receiver's clock), not from
  // the write's start: time the event loop spent elsewhere before the write (other requests, a long
  // verify) is inside it, and so are the engine client's own retries and backoff, aborted with it.
  // (A wall clock stepped back since the receipt does not stretch it past `timeoutMs` from now.)
  const { clock } = options;
  const deadline = createDeadline(clock, Math.min(delivery.receivedAt, clock.now()) + timeoutMs);
  const late = () =>
    new Error(`hand-off enqueue did not answer within ${timeoutMs} ms of the delivery's receipt`);
  // Already past it (the loop was blocked since the body was read): 503 without starting a write.
  if (deadline.remainingMs() === 0) return unavailable(late());
  let pending: Promise<EnqueueResult | undefined>;
  try {
    const { quarantine } = delivery;
    pending = Promise.resolve(
      quarantine && target.quarantine
        ? target.quarantine(job, quarantine, { signal: controller.signal })
        : target.enqueue(job, { signal: controller.signal }),
    );
  } catch (error) {
    pending = Promise.reject(error);
  }
  let result: EnqueueResult | undefined | typeof TIMED_OUT;
  try {
    // Past the bound the sender gets 503 even if the engine writes the job later: its retry then
    // finds the job (the engine's uniqueness on `dedupKey`) and is acknowledged as a duplicate.
    result = await deadline.race(pending);
  } catch (error) {
    return unavailable(error);
  } finally {
    deadline.cancel();
  }
  if (result === TIMED_OUT) {
    controller.abort(late());
    return unavailable(controller.signal.reason);
  }
  const kind = result === 'duplicate' ? 'duplicate' : 'queued';
  if (delivery.quarantine)
    emit(options.logger, 'warn', 'verified webhook failed validation: quarantined', {
      ...fields,
      code: delivery.quarantine.code,
    });
  else emit(options.logger, 'debug', `webhook ${kind} for a worker`, fields);
  return accepted(kind, service, deliveryId, name);
}
