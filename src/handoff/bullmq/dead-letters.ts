/**
 * Dead letters of the BullMQ hand-off: jobs that used all their attempts, or whose data was invalid,
 * are kept in BullMQ's `failed` state (the hand-off adds with `removeOnFail: false`). Listing reads
 * them; re-driving moves one back to `wait` with its attempts reset, keeping its id, so it still
 * blocks a new copy of the same delivery and runs once more through the claim.
 */
import { WebhookError } from '../../shared/errors.js';
import { jobFields } from '../run-and-settle.js';
import type { BullmqJobLike, BullmqQueueLike } from './bullmq-like.js';
import { dedupKeyOfJobId } from './job-id.js';

/**
 * One dead-lettered hand-off job.
 *
 * @example
 * ```ts
 * const letters: BullmqDeadLetter[] = await listBullmqDeadLetters(queue);
 * for (const { jobId, reason } of letters) console.log(jobId, reason);
 * ```
 */
export interface BullmqDeadLetter {
  /** The BullMQ job id (give it to {@link redriveBullmqDeadLetter}). */
  jobId: string;
  /** The dedup key the id was made from. */
  dedupKey: string;
  /** From the job data, when it had one. */
  deliveryId: string | undefined;
  /** From the job data, when it had one. */
  event: string | undefined;
  /** Why it failed last: the handler's error message, `Invalid hand-off job: …`, or BullMQ's own. */
  reason: string;
  /** Runs made. */
  attemptsMade: number;
  /** When it failed for the last time, epoch ms. */
  failedAt: number | undefined;
}

function toDeadLetter(job: BullmqJobLike): BullmqDeadLetter {
  const jobId = job.id ?? '';
  const { deliveryId, event } = jobFields(job.data);
  return {
    jobId,
    dedupKey: dedupKeyOfJobId(jobId),
    deliveryId,
    event,
    reason: job.failedReason ?? 'unknown',
    attemptsMade: job.attemptsMade,
    failedAt: job.finishedOn,
  };
}

/**
 * The dead letters of a hand-off queue, oldest first by BullMQ's failed order, `start`..`end`
 * inclusive (default the first 100). The same as `queue.getFailed(start, end)`.
 *
 * @example
 * ```ts
 * import { listBullmqDeadLetters } from '@svc/webhooks/bullmq';
 *
 * const letters = await listBullmqDeadLetters(queue, { start: 0, end: 49 });
 * ```
 */
export async function listBullmqDeadLetters(
  queue: BullmqQueueLike,
  range: { start?: number; end?: number } = {},
): Promise<BullmqDeadLetter[]> {
  const { start = 0, end = 99 } = range;
  const jobs = await queue.getFailed(start, end);
  return jobs.filter((job) => job !== undefined && job !== null).map(toDeadLetter);
}

/**
 * Puts one dead letter back in the queue with its attempts reset (after you fixed the handler or
 * its dependency). The worker claims its dedup key as usual, so it runs once; a letter whose delivery
 * completed meanwhile finishes as a duplicate without running handlers.
 *
 * @example
 * ```ts
 * import { listBullmqDeadLetters, redriveBullmqDeadLetter } from '@svc/webhooks/bullmq';
 *
 * for (const letter of await listBullmqDeadLetters(queue)) await redriveBullmqDeadLetter(queue, letter.jobId);
 * ```
 */
export async function redriveBullmqDeadLetter(queue: BullmqQueueLike, jobId: string): Promise<void> {
  const job = await queue.getJob(jobId);
  if (!job)
    throw new WebhookError('options_invalid', `redriveBullmqDeadLetter: no job ${jobId} in the queue.`);
  await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
}

/**
 * Re-drives every dead letter there is when it is called, each once, and returns how many were put
 * back. It lists them first (in pages of 100) and only then re-drives: a letter that fails again at
 * once is a dead letter again, for the next call.
 *
 * @example
 * ```ts
 * import { redriveBullmqDeadLetters } from '@svc/webhooks/bullmq';
 *
 * console.log(await redriveBullmqDeadLetters(queue), 'dead letters re-driven');
 * ```
 */
export async function redriveBullmqDeadLetters(queue: BullmqQueueLike): Promise<number> {
  const ids = new Set<string>();
  const total = await queue.getFailedCount();
  for (let start = 0; start < total; start += 100) {
    for (const job of await queue.getFailed(start, start + 99)) if (job?.id) ids.add(job.id);
  }
  let count = 0;
  for (const id of ids) {
    const job = await queue.getJob(id);
    // Removed meanwhile, or re-driven by someone else: nothing to put back.
    if (!job || !(await job.isFailed())) continue;
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    count++;
  }
  return count;
}
