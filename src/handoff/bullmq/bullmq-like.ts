/**
 * The parts of BullMQ's `Queue` and `Job` this entry uses: any object with these methods works (the
 * user's own `Queue`, or a wrapper of it).
 */
import type { Job, JobsOptions, Queue } from 'bullmq';

/**
 * Options of `queue.add` that this entry sets.
 *
 * @example
 * ```ts
 * const keep: BullmqAddOptions['removeOnComplete'] = { age: 3_600, count: 1_000 };
 * ```
 *
 * @example
 * ```ts
 * import type { BullmqAddOptions } from '@svc/webhooks/bullmq';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: BullmqAddOptions): BullmqAddOptions {
 *   return value;
 * }
 * ```
 */
export type BullmqAddOptions = Pick<
  JobsOptions,
  'jobId' | 'attempts' | 'backoff' | 'removeOnComplete' | 'removeOnFail'
>;

/**
 * A BullMQ job, as far as dead letters need it.
 *
 * @example
 * ```ts
 * const reasonOf = (job: BullmqJobLike) => job.failedReason;
 * ```
 */
export type BullmqJobLike = Pick<
  Job,
  'id' | 'name' | 'data' | 'attemptsMade' | 'failedReason' | 'finishedOn' | 'timestamp' | 'retry'
>;

/**
 * A BullMQ `Queue`, as far as the hand-off and dead letters need it.
 *
 * @example
 * ```ts
 * const queue: BullmqQueueLike = new Queue('svc-webhooks', { connection, prefix: '{svc-webhooks}' });
 * ```
 *
 * @example
 * ```ts
 * import type { BullmqQueueLike } from '@svc/webhooks/bullmq';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: BullmqQueueLike): BullmqQueueLike {
 *   return value;
 * }
 * ```
 */
export type BullmqQueueLike = Pick<Queue, 'name' | 'add' | 'getFailed' | 'getFailedCount' | 'getJob'>;
