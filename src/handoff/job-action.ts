/**
 * @module
 * The one translation of a worker's {@link Verdict} into what a queue engine does with the job. Every
 * engine (BullMQ, pg-boss, Cloudflare Queues, SQS, NATS JetStream, the database inbox) asks this
 * function and maps its four answers onto its own calls; none re-derives "refused" or "retry" from
 * error codes of its own.
 */

import type { AcceptedVerdict, Verdict } from '../core/verdict.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';

/**
 * The error a queue engine records for a job's verdict, or `undefined` when the job is done
 * (`handled`, `duplicate`, `ignored`). The original error (a handler's own) is the `cause` unless it
 * already is the {@link WebhookError} of the verdict's code. {@link jobAction} says what to do with it.
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

/**
 * What a queue engine does with a job after `runJob`:
 *
 * | type | when | engine |
 * | --- | --- | --- |
 * | `done` | `handled`, `duplicate`, `ignored` | acknowledge / complete |
 * | `dead-letter` | refused (`job_invalid`, `no_handler`), or a failure on the last attempt (`exhausted`) | move to its dead letters with `error` |
 * | `delay` | another run holds the claim, or the worker is shutting down | put back after `ms` **without** using an attempt |
 * | `retry` | any other failure with attempts left | retry with the engine's backoff (uses an attempt) |
 *
 * `reported` says whether the receiver already sent `error` to `onError` and the logger (a handler's
 * own failure or timeout, inside `runJob`): the engine reports the others, once.
 *
 * @example
 * ```ts
 * import { jobAction } from '@svc/webhooks/handoff';
 *
 * const action = jobAction(await receiver.runJob(job.data, { attempt }), { attempt, maxAttempts: 5 });
 * if (action.type === 'retry') throw action.error;
 * ```
 */
export type JobAction =
  | { readonly type: 'done'; readonly verdict: AcceptedVerdict }
  | {
      readonly type: 'dead-letter';
      readonly error: WebhookError;
      /** True for a failure whose attempts ran out; false for a refusal no retry can fix. */
      readonly exhausted: boolean;
      readonly reported: boolean;
    }
  | { readonly type: 'delay'; readonly ms: number; readonly error: WebhookError; readonly reported: boolean }
  | { readonly type: 'retry'; readonly error: WebhookError; readonly reported: boolean };

/**
 * Options of {@link jobAction}.
 *
 * @example
 * ```ts
 * const options: JobActionOptions = { attempt: 2, maxAttempts: 5, busyDelayMs: 5_000 };
 * ```
 */
export interface JobActionOptions {
  /** The engine's attempt number of this run, from 1. */
  readonly attempt: number;
  /** Attempts the engine allows in all; a failure on the last one is dead-lettered. Default: unbounded (the engine decides). */
  readonly maxAttempts?: number | undefined;
  /** How long to wait before running a job whose claim another run holds, when the verdict says nothing. Default 5 000. */
  readonly busyDelayMs?: number | undefined;
  /** The worker is shutting down: a failed run is put back without using an attempt. */
  readonly shuttingDown?: boolean | undefined;
}

/** Codes a retry cannot fix: the job is not one of this receiver's, or nothing here handles it. */
const FINAL_CODES = new Set(['job_invalid', 'no_handler']);

/** Codes `runJob` has already reported to `onError` and the logger. */
const REPORTED_CODES = new Set(['handler_failed', 'handler_timeout']);

/**
 * What a queue engine does with a job, from its verdict (see {@link JobAction}).
 *
 * @example
 * ```ts
 * import { jobAction } from '@svc/webhooks/handoff';
 *
 * const verdict = await receiver.runJob(message.body, { attempt: message.attempts });
 * const action = jobAction(verdict, { attempt: message.attempts, maxAttempts: 3 });
 * if (action.type === 'done') message.ack();
 * else if (action.type === 'delay') message.retry({ delaySeconds: Math.ceil(action.ms / 1000) });
 * ```
 */
export function jobAction(verdict: Verdict, options: JobActionOptions): JobAction {
  const error = jobError(verdict);
  if (error === undefined) return { type: 'done', verdict: verdict as AcceptedVerdict };
  const { attempt, maxAttempts, busyDelayMs = 5_000, shuttingDown = false } = options;
  const code = error.code;
  const reported = REPORTED_CODES.has(code);
  if (verdict.kind === 'refused' || FINAL_CODES.has(code))
    return { type: 'dead-letter', error, exhausted: false, reported: false };
  if (code === 'delivery_in_progress' || shuttingDown) {
    const ms =
      verdict.kind === 'failed' && verdict.retryAfterMs !== undefined ? verdict.retryAfterMs : busyDelayMs;
    return { type: 'delay', ms: Math.max(0, ms), error, reported };
  }
  if (maxAttempts !== undefined && attempt >= maxAttempts)
    return { type: 'dead-letter', error, exhausted: true, reported };
  return { type: 'retry', error, reported };
}

/**
 * The action for an error a worker caught outside a verdict (`runJob` never rejects; a run step of
 * an engine's own may): retried like a failure, dead-lettered on the last attempt.
 */
export function jobActionOfError(error: unknown, options: JobActionOptions): JobAction {
  const webhookError = isWebhookError(error)
    ? error
    : new WebhookError('internal_error', error instanceof Error ? error.message : String(error), {
        cause: error,
      });
  if (options.maxAttempts !== undefined && options.attempt >= options.maxAttempts)
    return { type: 'dead-letter', error: webhookError, exhausted: true, reported: false };
  return { type: 'retry', error: webhookError, reported: false };
}
