/**
 * The worker side of the hand-off: `receiver.runJob(job)` checks the job's MAC (job-mac.ts: only a
 * receiver holding one of this worker's secrets wrote it, and no field changed since), rebuilds the
 * typed event from the job's verified bytes with the receiver's own parse, then claims, runs and
 * settles it with the same processing step as direct mode (core/process-delivery.ts), and resolves
 * with the same verdict.
 * Exactly-once effect over an at-least-once engine: a job redelivered after a worker crash runs its
 * handlers again only if no run recorded completion (docs/handoff.md "Guarantees").
 */

import type { HandlerRegistry } from '../../core/handler-registry.js';
import { emit } from '../../core/logger.js';
import { processDelivery } from '../../core/process-delivery.js';
import { processSettings } from '../../core/receive-path.js';
import type { ResolvedOptions } from '../../core/receiver-options.js';
import { report } from '../../core/report.js';
import type { ServiceSpec } from '../../core/service-spec.js';
import { reportDeadLetter, telemetryEnabled, traced } from '../../core/telemetry.js';
import { refused, type Verdict } from '../../core/verdict.js';
import { isWebhookError, WebhookError } from '../../shared/errors.js';
import { checkJob, fromBase64 } from './job-codec.js';
import { matchJobMac } from './job-mac.js';
import type { HandoffJob, HandoffRunner, RunJobOptions } from './types.js';

/**
 * The job a hand-off worker passes to `runJob` to learn whether the receiver accepts a handler budget
 * (worker-checks.ts): refused like any job that is not an object, and never counted as an outcome. A
 * registered symbol, so it is the same in the ESM and the CJS build.
 */
export const LEASE_PROBE: unique symbol = Symbol.for('@svc/webhooks/lease-probe');

function jobInvalid(reason: string, cause?: unknown): WebhookError {
  return new WebhookError('job_invalid', `Invalid hand-off job: ${reason}.`, { cause });
}

/**
 * The event of a checked job whose MAC one of `secrets` reproduces, parsed as at receipt (its
 * `receivedAt` is trusted because the MAC covers it); `job_invalid` otherwise. The event's
 * `secretIndex` is this worker's index of the secret that matched.
 */
async function parseJob(
  spec: ServiceSpec,
  secrets: readonly string[],
  job: HandoffJob,
): Promise<ReturnType<ServiceSpec['parse']>> {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(job.body);
  } catch (error) {
    throw jobInvalid('body is not base64', error);
  }
  const secretIndex = await matchJobMac(secrets, job, bytes);
  if (secretIndex === -1) {
    // Written by hand, changed after the receiver wrote it, or signed with a secret this worker lacks.
    throw jobInvalid("its mac matches none of this worker's secrets");
  }
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
 * The error a queue engine records for a job's verdict, or `undefined` when the job is done
 * (`handled`, `duplicate`, `ignored`). A refusal (`job_invalid`, `no_handler`) is dead-lettered;
 * every failure is retried. The original error (a handler's own) is the `cause` unless it already is the
 * {@link WebhookError} of the verdict's code.
 *
 * @example
 * ```ts
 * import { jobError } from '@svc/webhooks';
 *
 * engine.work(async (job) => {
 *   const failure = jobError(await receiver.runJob(job.data, { attempt: job.attempt }));
 *   if (failure) throw failure; // the engine retries it, or dead-letters a `job_invalid`
 * });
 * ```
 */
export function jobError(verdict: Verdict): WebhookError | undefined {
  if (verdict.kind !== 'refused' && verdict.kind !== 'failed') return undefined;
  const { code, error } = verdict;
  if (isWebhookError(error) && error.code === code) return error;
  const detail = error instanceof Error ? `: ${error.message}` : '';
  const message =
    code === 'handler_failed'
      ? `The webhook handler failed${detail}`
      : code === 'delivery_in_progress'
        ? 'Another run of this job holds its claim; it will run again.'
        : code === 'store_unavailable'
          ? 'The dedup store is unavailable; the job will run again.'
          : `The job failed (${code}); it will run again.`;
  return new WebhookError(code, message, { cause: error });
}

/** `runJob` and `reportJobError` of a receiver, built once with it. */
export function createJobRunner(
  spec: ServiceSpec,
  options: ResolvedOptions,
  registry: HandlerRegistry,
): Omit<HandoffRunner, 'service'> {
  const { service } = spec;
  const { leaseMs, clock, logger, secrets, telemetry } = options;
  const settings = processSettings(options, registry);

  async function runJob(data: unknown, runOptions: RunJobOptions = {}): Promise<Verdict> {
    const { attempt, timeoutMs = leaseMs - 1_000 } = runOptions;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs >= leaseMs) {
      // A lease ending while a handler runs would let another worker run it at the same time.
      throw new WebhookError(
        'options_invalid',
        `runJob: timeoutMs (${String(timeoutMs)}) must be a positive whole number below leaseMs (${leaseMs}).`,
      );
    }
    let job: HandoffJob;
    let event: ReturnType<ServiceSpec['parse']>;
    try {
      job = checkJob(data, service);
      event = await parseJob(spec, secrets, job);
    } catch (error) {
      return refused(service, isWebhookError(error) ? error : jobInvalid('unreadable', error));
    }
    if (!telemetry || !telemetryEnabled(telemetry, logger, service))
      return processJob(job, event, runOptions, timeoutMs);
    // Only now, the MAC matched: the job's traceparent is the one its receiver wrote.
    const { deliveryId, name } = event;
    return traced(
      telemetry,
      { service, operation: 'process', event: name, deliveryId, attempt, traceparent: job.traceparent },
      () => processJob(job, event, runOptions, timeoutMs),
      logger,
    );
  }

  /** A checked job's handlers, claimed, run and settled; `no_handler` when this worker has none. */
  function processJob(
    job: HandoffJob,
    event: ReturnType<ServiceSpec['parse']>,
    runOptions: RunJobOptions,
    timeoutMs: number,
  ): Promise<Verdict> {
    const { dedupKey: key } = job;
    const handlers = registry.handlersFor(event);
    if (handlers.length === 0) {
      // The receiver acknowledged it for these workers: dead-lettered, to re-drive after the deploy
      // that registers a handler, rather than dropped.
      const { deliveryId, name } = event;
      emit(logger, 'warn', 'hand-off job refused: no handler for its event in this worker', {
        service,
        deliveryId,
        event: name,
        dedupKey: key,
      });
      return Promise.resolve(
        refused(
          service,
          new WebhookError(
            'no_handler',
            "No handler for this job's event in this worker; re-drive its dead letter once one is registered.",
          ),
          { deliveryId, event: name },
        ),
      );
    }
    const { claim, tx } = runOptions;
    return processDelivery(claim ? { ...settings, store: claim } : settings, {
      service,
      event,
      handlers,
      key,
      startedAt: clock.now(),
      timeoutMs,
      upstream: runOptions,
      attempt: runOptions.attempt,
      tx,
    });
  }

  function reportJobError(
    error: unknown,
    facts: { deliveryId?: string; dedupKey?: string; message: string; deadLetter?: boolean },
  ): void {
    const { deliveryId, dedupKey, message } = facts;
    if (facts.deadLetter === true && telemetry && telemetryEnabled(telemetry, logger, service))
      reportDeadLetter(telemetry, logger, { service, code: isWebhookError(error) ? error.code : undefined });
    report(registry.errorHooks, logger, 'error', message, { service, deliveryId, dedupKey }, error, {
      phase: 'job',
      deliveryId,
      dedupKey,
    });
  }

  return { runJob, reportJobError };
}
