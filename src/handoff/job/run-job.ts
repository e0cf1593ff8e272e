/**
 * The worker side of the hand-off: `receiver.runJob(job)` checks the job's MAC (job-mac.ts: only a
 * receiver holding one of this worker's job keys, its `handoffSecret` or else its webhook secrets,
 * wrote it, and no field changed since), checks a bound route's tenant again, rebuilds the
 * typed event from the job's verified bytes with the receiver's own parse, then claims, runs and
 * settles it with the same processing step as direct mode (core/delivery/run.ts), and resolves
 * with the same verdict.
 * Exactly-once effect over an at-least-once engine: a job redelivered after a worker crash runs its
 * handlers again only if no run recorded completion (docs/handoff.md "Guarantees").
 */

import { runBudget } from '../../core/delivery/budget.js';
import type { DeliverySettings } from '../../core/delivery/run.js';
import { runInWorker } from '../../core/delivery/worker-run.js';
import type { HandlerRegistry } from '../../core/handler-registry.js';
import { type DeliveryFacts, eventTimeOf } from '../../core/lag.js';
import type { PipelineOptions } from '../../core/pipeline-options.js';
import { checkTenant } from '../../core/route-tenant.js';
import type { ServiceSpec } from '../../core/service-spec.js';
import { telemetryEnabled, traced } from '../../core/telemetry.js';
import { failed, refused, type Verdict, verdictOfError } from '../../core/verdict.js';
import { isWebhookError, WebhookError } from '../../shared/errors.js';
import { checkJob, fromBase64 } from './job-codec.js';
import { matchJobMac } from './job-mac.js';
import type { HandoffJob, RunJobOptions } from './types.js';

function jobInvalid(reason: string, cause?: unknown): WebhookError {
  return new WebhookError('job_invalid', `Invalid hand-off job: ${reason}.`, { cause });
}

/**
 * The event of a checked job whose MAC one of the worker's job keys reproduces, parsed as at receipt
 * (its `receivedAt` is trusted because the MAC covers it); `job_invalid` otherwise. The event's
 * `secretIndex` is this worker's index of the webhook secret that matched, or with `handoffSecret`
 * the receiver's (`job.secretIndex`: a worker does not know a route's secrets).
 */
async function parseJob(
  spec: ServiceSpec,
  options: PipelineOptions,
  job: HandoffJob,
): Promise<ReturnType<ServiceSpec['parse']>> {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(job.body);
  } catch (error) {
    throw jobInvalid('body is not base64', error);
  }
  const { handoffSecrets, secrets } = options;
  const own = handoffSecrets.length > 0;
  const matched = own
    ? await matchJobMac(handoffSecrets, job, bytes, 0)
    : await matchJobMac(secrets, job, bytes);
  if (matched === -1) {
    // Written by hand, changed after the receiver wrote it, or signed with a key this worker lacks.
    throw jobInvalid(`its mac matches none of this worker's ${own ? 'handoffSecret keys' : 'secrets'}`);
  }
  const secretIndex = own ? job.secretIndex : matched;
  let event: ReturnType<ServiceSpec['parse']>;
  try {
    event = spec.parse(bytes, job.headers, secretIndex, job.receivedAt);
  } catch (error) {
    // A deploy between receipt and run changed the schemas.
    const code = isWebhookError(error) ? error.code : 'parse error';
    throw jobInvalid(`its body no longer parses (${code})`, error);
  }
  if (event.deliveryId !== job.deliveryId || event.name !== job.event)
    throw jobInvalid('deliveryId or event differ from the body and headers');
  return event;
}

/**
 * A receiver's `runJob`; `facts`, given by the outcome reporting (receiver/observe.ts), gets the
 * times of the job's lag (core/lag.ts).
 */
export type RunJob = (job: unknown, options?: RunJobOptions, facts?: DeliveryFacts) => Promise<Verdict>;

/** The `runJob` of a receiver, built on its first job: its deliveries run with `settings`. */
export function createJobRunner(
  spec: ServiceSpec,
  options: PipelineOptions,
  registry: HandlerRegistry,
  settings: DeliverySettings,
): RunJob {
  const { service } = spec;
  const { leaseMs, logger, secrets, handoffSecrets, telemetry } = options;
  const reporter = { hooks: settings.hooks, logger };

  async function runJob(
    data: unknown,
    runOptions: RunJobOptions = {},
    facts?: DeliveryFacts,
  ): Promise<Verdict> {
    const { attempt } = runOptions;
    // The worker is wrong, not the job: `failed options_invalid`, retried (the shipped workers check
    // their budget when they start, so they never get here).
    const timeoutMs = runBudget(runOptions.timeoutMs, leaseMs);
    if (typeof timeoutMs !== 'number') return failed(service, timeoutMs.code, timeoutMs);
    if (secrets.length === 0 && handoffSecrets.length === 0) {
      // A worker of a receiver with a `secret` function: retried, not dead-lettered, until fixed.
      const error = new WebhookError(
        'options_invalid',
        'runJob: a receiver with a secret function needs handoffSecret, the key its receivers sign jobs with.',
      );
      return failed(service, error.code, error);
    }
    let job: HandoffJob;
    let event: ReturnType<ServiceSpec['parse']>;
    try {
      job = checkJob(data, service);
      event = await parseJob(spec, options, job);
    } catch (error) {
      return refused(service, isWebhookError(error) ? error : jobInvalid('unreadable', error));
    }
    // The receiver checked it before writing the job; a worker bound to tenants checks the route the
    // MAC vouches for again (a receiver without the binding, or a job re-driven after a change).
    const wrong = job.route && checkTenant(spec, reporter, event, job.route);
    if (wrong) return verdictOfError(service, wrong, { deliveryId: event.deliveryId, event: event.name });
    if (facts) {
      // The MAC matched: the receipt time is the receiver's, not the sender's.
      facts.receivedAt = job.receivedAt;
      facts.eventAt = eventTimeOf(spec.timestamp?.(event));
    }
    if (!telemetry || !telemetryEnabled(telemetry, logger, service))
      return processJob(job, event, runOptions, timeoutMs, facts);
    // Only now, the MAC matched: the job's traceparent is the one its receiver wrote.
    const { deliveryId, name } = event;
    return traced(
      telemetry,
      { service, operation: 'process', event: name, deliveryId, attempt, traceparent: job.traceparent },
      () => processJob(job, event, runOptions, timeoutMs, facts),
      logger,
    );
  }

  /** A checked job's handlers, claimed, run and settled; `no_handler` when this worker has none. */
  function processJob(
    job: HandoffJob,
    event: ReturnType<ServiceSpec['parse']>,
    runOptions: RunJobOptions,
    timeoutMs: number,
    facts: DeliveryFacts | undefined,
  ): Promise<Verdict> {
    // The receiver acknowledged it for these workers: with no handler here it is dead-lettered, to
    // re-drive after the deploy that registers one, rather than dropped.
    return runInWorker(settings, registry, {
      service,
      what: 'hand-off job',
      event,
      dedupKey: job.dedupKey,
      timeoutMs,
      upstream: runOptions,
      attempt: runOptions.attempt,
      waitUntil: runOptions.waitUntil,
      route: job.route,
      facts,
    });
  }

  return runJob;
}
