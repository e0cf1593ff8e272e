/**
 * The worker side of the hand-off: `receiver.runJob(job)` rebuilds the typed event from the job's
 * verified bytes with the receiver's own parse, then claims, runs and settles it with the same
 * processing step as direct mode (core/process-delivery.ts). Exactly-once effect over an
 * at-least-once engine: a job redelivered after a worker crash runs its handlers again only if no run
 * recorded completion (docs/handoff.md "Guarantees").
 */
import { isWebhookError, WebhookError } from '../../shared/errors.js';
import type { DispatchableEvent, HandlerRegistry } from '../handler-registry.js';
import type { ErrorHook } from '../handler-types.js';
import { emit } from '../logger.js';
import { createProcessDelivery } from '../process-delivery.js';
import type { ResolvedOptions } from '../receiver-options.js';
import { report } from '../report.js';
import type { ServiceSpec } from '../service-spec.js';
import { storeOpsFor } from '../store-ops.js';
import { checkJob, fromBase64 } from './job-codec.js';
import type { HandoffJob, HandoffRunner, RunJobOptions, RunJobResult } from './types.js';

function jobInvalid(reason: string, cause?: unknown): WebhookError {
  return new WebhookError('job_invalid', `Invalid hand-off job: ${reason}.`, { cause });
}

/** The event of a checked job, parsed as at receipt; `job_invalid` when it no longer parses. */
function parseJob<E extends DispatchableEvent>(spec: ServiceSpec<E>, job: HandoffJob): E {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(job.body);
  } catch (error) {
    throw jobInvalid('body is not base64', error);
  }
  let event: E;
  try {
    event = spec.parse(bytes, job.headers, job.secretIndex, job.receivedAt);
  } catch (error) {
    // A deploy between receipt and run changed the schemas, or the job was written by hand.
    const code = isWebhookError(error) ? error.code : 'parse error';
    throw jobInvalid(`its body no longer parses (${code})`, error);
  }
  if (event.deliveryId !== job.deliveryId || event.name !== job.event)
    throw jobInvalid('deliveryId or event differ from the body and headers');
  return event;
}

/** `runJob` and `reportJobError` of a receiver, built once with it. */
export function createJobRunner<E extends DispatchableEvent>(
  spec: ServiceSpec<E>,
  options: ResolvedOptions,
  registry: HandlerRegistry,
): Omit<HandoffRunner, 'service'> {
  const { service } = spec;
  const { leaseMs, clock, logger } = options;
  // The receiver's store operations (bounded, abandoning claims whose answer was lost), built once.
  const store = storeOpsFor(options);

  async function runJob(data: unknown, runOptions: RunJobOptions = {}): Promise<RunJobResult> {
    const { signal, attempt, timeoutMs = leaseMs - 1_000 } = runOptions;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs >= leaseMs) {
      // A lease ending while a handler runs would let another worker run it at the same time.
      throw new WebhookError(
        'options_invalid',
        `runJob: timeoutMs (${String(timeoutMs)}) must be a positive whole number below leaseMs (${leaseMs}).`,
      );
    }
    const job = checkJob(data, service);
    const event = parseJob(spec, job);
    const { key } = job;
    const handlers = registry.handlersFor(event);
    if (handlers.length === 0) {
      emit(logger, 'debug', 'hand-off job ignored: no handler', { service, key, event: event.name });
      return 'ignored';
    }
    // The handler's own error, seen on its way to the receiver's onError hooks and logger.
    let handlerError: unknown;
    const capture: ErrorHook<DispatchableEvent> = (error, info) => {
      if (info.phase === 'handler') handlerError = error;
    };
    const processDelivery = createProcessDelivery(
      { ...options, timeoutMs },
      [capture, ...registry.errorHooks],
      store,
    );
    const outcome = await processDelivery({
      service,
      event,
      handlers,
      key,
      startedAt: clock.now(),
      signal,
      attempt,
    });
    if (outcome.result === 'duplicate') return 'duplicate';
    if (outcome.status < 300) return 'processed';
    if (outcome.code === 'handler_failed') {
      const message = handlerError instanceof Error ? `: ${handlerError.message}` : '';
      throw new WebhookError('handler_failed', `The webhook handler failed${message}`, {
        cause: handlerError,
      });
    }
    if (outcome.code === 'delivery_in_progress')
      throw new WebhookError(
        'delivery_in_progress',
        'Another run of this job holds its claim; it will run again.',
      );
    if (outcome.code === 'store_unavailable')
      throw new WebhookError('store_unavailable', 'The dedup store is unavailable; the job will run again.');
    throw new WebhookError(
      outcome.code ?? 'internal_error',
      outcome.code === 'handler_timeout'
        ? `Handlers still running after ${timeoutMs} ms; the claim is kept until they settle.`
        : 'The job failed; it will run again.',
    );
  }

  function reportJobError(
    error: unknown,
    facts: { deliveryId?: string; key?: string; message: string },
  ): void {
    const { deliveryId, key, message } = facts;
    report(registry.errorHooks, logger, 'error', message, { service, deliveryId, key }, error, {
      phase: 'job',
      deliveryId,
      key,
    });
  }

  return { runJob, reportJobError };
}
