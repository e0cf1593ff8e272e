/**
 * The hand-off contract between a receiver and a queue engine: the job a receiver writes, the target
 * it writes it to, and what the engine's workers call to run the handlers (docs/handoff.md).
 */

import type { ErrorInfo } from '../../core/handler-types.js';
import type { SecretRequest } from '../../core/route-secrets.js';
import type { Verdict } from '../../core/verdict.js';

/**
 * The version of {@link HandoffJob} this library writes and reads. A job with another `v` (written by
 * hand, or by a version of this library with another format) is refused with `job_invalid`.
 * Version 2 added `mac`: version 1 jobs, which carry none, are refused.
 *
 * @example
 * ```ts
 * import { HANDOFF_JOB_VERSION, type HandoffJob } from '@svc/webhooks/handoff';
 *
 * export function isCurrent(job: HandoffJob): boolean {
 *   return job.v === HANDOFF_JOB_VERSION;
 * }
 * ```
 */
export const HANDOFF_JOB_VERSION = 2;

/**
 * What a hand-off receiver enqueues for one verified, validated delivery: the exact verified bytes
 * (base64) and the two headers its parse reads, so the worker rebuilds the typed event by running the
 * same parse again. The verified bytes rather than the parsed payload, because parsing is what the
 * worker's version of the schemas must do (a job outlives a deploy). Never the secret, never the
 * sender's signature: `mac`, an HMAC-SHA256 over every other field and the body under a key derived
 * from the receiver's `handoffSecret` (or, without one, the webhook secret), proves the receiver wrote
 * it after verifying; a worker refuses a job whose `mac` none of its secrets reproduces
 * (`job_invalid`, docs/handoff-jobs.md).
 * Plain JSON: every engine stores it as is.
 *
 * @example
 * ```ts
 * const job: HandoffJob = {
 *   v: 2, service: 'mail', deliveryId: 'd_1', event: 'bounced', dedupKey: 'mail:delivery:d_1',
 *   receivedAt: Date.now(), secretIndex: 0,
 *   headers: { 'x-svcmail-event': 'bounced', 'x-svcmail-id': 'd_1' }, body: 'eyJ0byI6…',
 *   mac: '5f0c…', // 64 hex digits
 * };
 * ```
 */
export interface HandoffJob {
  /** Format version, {@link HANDOFF_JOB_VERSION}. */
  v: typeof HANDOFF_JOB_VERSION;
  /** The receiver's service; a job of another service is refused (`job_invalid`). */
  service: string;
  /** The delivery id of the delivery that was enqueued (retries of it carry the same). */
  deliveryId: string;
  /** The event name. */
  event: string;
  /** The dedup key (`mail:…`, `crm:…`): the engine's unique job id and the key the worker claims. */
  dedupKey: string;
  /** When the receiver got the delivery, epoch ms of its clock (`maxEventAgeMs` is judged at it). */
  receivedAt: number;
  /**
   * Which of the receiver's secrets (or, with a `secret` function, of its route's) verified the
   * signature: an index, never the secret. Without `handoffSecret` its job key signed `mac`, and a
   * worker tries its secret at this index first, then its others.
   */
  secretIndex: number;
  /** The service's event and delivery-id headers as received, by lowercase name. */
  headers: Record<string, string>;
  /**
   * The W3C trace context of the receiver's `send` span (`00-<trace id>-<span id>-<flags>`), when the
   * receiver has `telemetry` and a span was active: the worker's `process` span continues this trace.
   * Covered by `mac` like every other field; absent otherwise.
   */
  traceparent?: string;
  /**
   * The route the delivery arrived on, as a `secret` function saw it: handlers read it as
   * `context.route`, and a CRM receiver's `routeTenant` checks the body's tenant against it again.
   * Covered by `mac`; every receiver writes it (a job without one is still read).
   */
  route?: SecretRequest;
  /** The verified body bytes, base64. */
  body: string;
  /** Lowercase hex HMAC-SHA256 of every other field and the body bytes (docs/handoff-jobs.md). */
  mac: string;
}

/**
 * What {@link HandoffTarget.enqueue} reports: `'enqueued'` for a new job, `'duplicate'` when the
 * engine already held a job with this key (both are acknowledged 2xx).
 *
 * @example
 * ```ts
 * const result: EnqueueResult = await target.enqueue(job, { signal });
 * ```
 */
export type EnqueueResult = 'enqueued' | 'duplicate';

/**
 * A queue engine as a receiver sees it (option `handoff`). `enqueue` must resolve only once the
 * engine confirmed the job is stored, and must be idempotent on `job.dedupKey` (the engine's own
 * uniqueness: a BullMQ `jobId`, a pg-boss singleton key): a second enqueue of the same key, while the
 * first job is queued, running or kept as completed or failed, stores nothing new. A rejection, or no
 * answer within `enqueueTimeoutMs`, answers the delivery 503 `handoff_unavailable` with `Retry-After`.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createBullmqHandoff } from '@svc/webhooks/bullmq';
 *
 * const receiver = createMailReceiver({ secret, dedup, handoff: createBullmqHandoff({ queue }) });
 * ```
 */
export interface HandoffTarget {
  /** Stores `job`, keyed on `job.dedupKey`. `signal` aborts when the receiver stops waiting. */
  enqueue(job: HandoffJob, options: { signal: AbortSignal }): Promise<EnqueueResult | undefined>;
  /**
   * How long the receiver waits for `enqueue`, in ms, counted from the delivery's receipt (its body
   * read, on the receiver's clock); then 503. Default 2 000 (`storeTimeoutMs`'s).
   */
  readonly enqueueTimeoutMs?: number;
  /**
   * Largest delivery body a job of this engine carries, in bytes, for an engine with a message size
   * limit (Cloudflare Queues: 64 KiB). A receiver without its own `maxBodyBytes` takes it as its
   * limit; one whose `maxBodyBytes` is larger is refused when created. Default 6 MiB.
   */
  readonly maxBodyBytes?: number;
}

/**
 * Options of `receiver.runJob`.
 *
 * @example
 * ```ts
 * await receiver.runJob(job.data, { attempt: job.attemptsMade + 1, signal });
 * ```
 */
export interface RunJobOptions {
  /** Aborts the handlers (a worker shutting down); passed on through the handlers' `signal`. */
  signal?: AbortSignal;
  /** The engine's attempt number of this job, from 1; handlers read it as `context.attempt`. */
  attempt?: number;
  /**
   * Handler time budget in ms, from the job's start; then `signal` aborts and the verdict is
   * `handler_timeout` (the claim is kept, and its lease extended, until the handlers settle).
   * Default: the receiver's `leaseMs` minus 1 s; it must stay below `leaseMs` (else the verdict is
   * `failed options_invalid` and no handler runs).
   */
  timeoutMs?: number;
  /**
   * Keeps the runtime serving handlers still running at `timeoutMs`, and the dedup store's record of
   * their outcome, after the job's verdict: a Cloudflare Worker's `ctx.waitUntil` (the Queues
   * consumer passes it). Not needed where the process outlives the job.
   */
  waitUntil?: (work: Promise<unknown>) => void;
}

/**
 * The part of a receiver a worker needs: both receivers have it.
 *
 * @example
 * ```ts
 * function startWorker(receiver: HandoffRunner) {
 *   engine.work(async (job) => receiver.runJob(job.data, { attempt: job.attempt }));
 * }
 * ```
 */
export interface HandoffRunner {
  /** Which service this receiver is for. */
  readonly service: string;
  /**
   * How long a claim holds, in ms (the receiver's `leaseMs`): a worker's handler budget must stay
   * below it, so the claim outlives every run.
   */
  readonly leaseMs: number;
  /**
   * Runs one enqueued job: checks the job and its MAC (refused `job_invalid`), parses its bytes again,
   * claims its dedup key, runs the same `.on(...)` handlers with an `AbortSignal` and `attempt` while
   * keeping the claim's lease, then completes the claim (`handled`) or releases it (`failed`, so the
   * engine retries). An event with no handler here is refused `no_handler`. Resolves with the
   * {@link Verdict} and never rejects; `jobAction(verdict)` says what the engine does with the job. The database
   * inbox's worker calls it with a row it claimed instead of a job, and the row as its held claim: the row's
   * stored signature is verified again with this receiver's secrets instead of a job MAC
   * (docs/inbox-worker.md "How rows are authenticated").
   */
  runJob(job: unknown, options?: RunJobOptions): Promise<Verdict>;
  /**
   * Reports a worker-side failure (phase `job`) to the receiver's `onError` hooks and logger, with the
   * job's {@link ErrorInfo} facts it knows and a log `message`. A queue engine sets `deadLetter` when it
   * dead-lettered the job, so the receiver's `telemetry` counts it.
   */
  reportJobError(
    error: unknown,
    info: Pick<ErrorInfo<unknown>, 'deliveryId' | 'dedupKey'> & { message: string; deadLetter?: boolean },
  ): void;
}
