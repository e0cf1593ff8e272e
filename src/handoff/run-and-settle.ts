/**
 * One job of any queue engine, start to end: run (`receiver.runJob`, or the engine's own run step),
 * translate the verdict once ({@link jobAction}), settle it the engine's way, report it once. The
 * core of the one worker loop (worker-loop.ts), and all of it for the engines that are not a loop
 * (a Cloudflare Queues batch, an SQS Lambda batch).
 */
import type { Verdict } from '../core/verdict.js';
import { isWebhookError, type WebhookError } from '../shared/errors.js';
import type { HandoffRunner, RunJobOptions } from './job/types.js';
import { type JobAction, jobAction, jobActionOfError } from './job-action.js';

/** What the loop knows of one job: the engine supplies it. */
export interface LoopJob {
  /** The engine's name and id of it, for reports (`SQS message 1f3…`, `BullMQ job 42`). */
  readonly label: string;
  /** The job as `runJob` takes it: a message body's JSON (or its text), a BullMQ job's data. */
  readonly data: unknown;
  /** The engine's attempt number of this run, from 1. */
  readonly attempt: number;
  /** Attempts the engine allows in all; a failure on the last one is dead-lettered. Default: the engine decides. */
  readonly maxAttempts?: number | undefined;
  /** The engine's own abort (pg-boss's expiry, BullMQ's cancel), joined with the shutdown's. */
  readonly signal?: AbortSignal | undefined;
  /** A Cloudflare Worker's `ctx.waitUntil`, for handlers still running at `timeoutMs`. */
  readonly waitUntil?: ((work: Promise<unknown>) => void) | undefined;
}

/**
 * What the engine did with a job: `done` (acknowledged), `dead-lettered`, or `retried` (put back,
 * with or without using an attempt; also what an engine with no dead letters of its own does).
 */
export type Settled = 'done' | 'dead-lettered' | 'retried';

/** The queue-specific part of running a job; everything else is the loop's. */
export interface EngineParts<J extends LoopJob> {
  readonly receiver: HandoffRunner;
  /** Handler budget per run (`runJob`'s `timeoutMs`). Default runJob's. */
  readonly timeoutMs?: number | undefined;
  /** Delay of a job whose claim another run holds, when the verdict says nothing, in ms. */
  readonly busyDelayMs?: number | undefined;
  /** Settles the job as `action` says, the engine's way; a rejection is reported and the job left to the engine. */
  settle(job: J, action: JobAction): Settled | Promise<Settled>;
  /** Keeps a running job from other consumers (a visibility timeout, `working()`), every `everyMs`. */
  readonly extend?: { readonly everyMs: number; call(job: J): unknown } | undefined;
  /** The run step, when it is not `receiver.runJob(job.data)` (the inbox's run in a transaction). */
  run?(job: J, options: RunJobOptions): Promise<Verdict>;
}

/** How a run ended. */
export interface RunResult {
  readonly action: JobAction;
  /** Undefined when the engine's settle failed (the job is left to the engine's redelivery). */
  readonly settled: Settled | undefined;
}

/** What a run sees of its worker. */
export interface RunState {
  /** Aborted past the shutdown bound. */
  readonly signal?: AbortSignal | undefined;
  /** Whether the worker is shutting down (read after the run: a failed run is then put back without an attempt). */
  readonly shuttingDown?: (() => boolean) | undefined;
}

/** An error's message for a report line. */
export const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : 'non-error thrown';

/**
 * The delivery id, event and dedup key a job's data shows (as written, not verified: a worker
 * verifies), each only when it is a string of at most 2 048 characters: what a report and a dead
 * letter listing name a job by.
 */
export function jobFields(data: unknown): { deliveryId?: string; event?: string; dedupKey?: string } {
  const fields = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const named: Record<string, string> = {};
  for (const name of ['deliveryId', 'event', 'dedupKey']) {
    const value = fields[name];
    if (typeof value === 'string' && value.length <= 2048) named[name] = value;
  }
  return named;
}

/** Why a job is a dead letter, as every engine's letter keeps it: `<code>: <message>`, at most 1 000 characters. */
export const letterReason = (error: WebhookError): string =>
  `${error.code}: ${error.message}`.slice(0, 1_000);

/** Reports `error` for `job` through the receiver, with the delivery id and dedup key its data shows; never throws. */
export function reportJob(
  receiver: HandoffRunner,
  error: unknown,
  job: Pick<LoopJob, 'data'> | undefined,
  message: string,
  deadLetter = false,
): void {
  const { deliveryId, dedupKey } = jobFields(job?.data);
  try {
    receiver.reportJobError(error, {
      ...(deliveryId === undefined ? {} : { deliveryId }),
      ...(dedupKey === undefined ? {} : { dedupKey }),
      message,
      ...(deadLetter ? { deadLetter } : {}),
    });
  } catch {
    // a throwing onError hook must not leave the job unsettled
  }
}

/** The job of a message body: its JSON, or the text itself (refused `job_invalid` by `runJob`). */
export function jobOfBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** Runs one job, settles it through `parts`, reports it once; never rejects. */
export async function runAndSettle<J extends LoopJob>(
  job: J,
  parts: EngineParts<J>,
  state: RunState = {},
): Promise<RunResult> {
  const { receiver, timeoutMs, busyDelayMs, extend } = parts;
  const { attempt, maxAttempts, label } = job;
  const lease =
    extend &&
    setInterval(() => {
      try {
        void Promise.resolve(extend.call(job)).catch(() => undefined);
      } catch {
        // the next turn tries again; the lease ends only if every turn fails
      }
    }, extend.everyMs);
  try {
    const signals = [job.signal, state.signal].filter((s): s is AbortSignal => s !== undefined);
    const options: RunJobOptions = {
      attempt,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(signals.length === 0
        ? {}
        : { signal: signals.length === 1 ? signals[0]! : AbortSignal.any(signals) }),
      ...(job.waitUntil === undefined ? {} : { waitUntil: job.waitUntil }),
    };
    let action: JobAction;
    try {
      const verdict = await (parts.run ? parts.run(job, options) : receiver.runJob(job.data, options));
      action = jobAction(verdict, {
        attempt,
        maxAttempts,
        busyDelayMs,
        shuttingDown: state.shuttingDown?.(),
      });
    } catch (error) {
      // runJob never rejects; a runner of one's own (or a run step) might.
      action = jobActionOfError(error, { attempt, maxAttempts });
    }
    let settled: Settled | undefined;
    try {
      settled = await parts.settle(job, action);
    } catch (error) {
      reportJob(receiver, error, job, `${label} could not be settled: ${describe(error)}; it runs again`);
    }
    if (action.type === 'done') return { action, settled };
    const { error } = action;
    const code = isWebhookError(error) ? error.code : 'internal_error';
    // A dead letter is always reported (and counted), even when runJob reported the failure.
    if (settled === 'dead-lettered') {
      const exhausted = action.type !== 'dead-letter' || action.exhausted;
      const after = exhausted ? ` after ${attempt} attempts` : '';
      reportJob(receiver, error, job, `${label} dead-lettered${after} (${code}): ${describe(error)}`, true);
    } else if (!action.reported) {
      reportJob(receiver, error, job, `${label} attempt ${attempt} not run (${code}); it runs again`);
    }
    return { action, settled };
  } finally {
    if (lease) clearInterval(lease);
  }
}
