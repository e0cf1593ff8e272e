/**
 * The two pg-boss queues of a hand-off: the work queue, whose retry policy pg-boss applies, and its
 * dead-letter queue, which receives a copy of every job that failed its last attempt or was refused.
 */
import type { PgBossLike, PgBossQueueSettings } from './boss-like.js';

/**
 * Retry policy of the work queue, in pg-boss's own terms (seconds). The default is 10 retries with
 * exponential backoff from 2 s capped at 10 min: about 25 minutes of retries before a job is
 * dead-lettered, long enough for a database restart or a deploy, short enough to be noticed.
 *
 * @example
 * ```ts
 * import type { PgBossRetryPolicy } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossRetryPolicy): PgBossRetryPolicy {
 *   return value;
 * }
 * ```
 */
export interface PgBossRetryPolicy {
  /** Retries after the first attempt (pg-boss `retryLimit`). Default 10. */
  limit?: number;
  /** Delay before the first retry, seconds (`retryDelay`). Default 2. */
  delaySeconds?: number;
  /** Double the delay on each retry, with jitter (`retryBackoff`). Default true. */
  backoff?: boolean;
  /** Longest delay between retries, seconds (`retryDelayMax`). Default 600. */
  maxDelaySeconds?: number;
}

/**
 * Queue settings shared by the hand-off and its workers.
 *
 * @example
 * ```ts
 * import type { PgBossQueueOptions } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossQueueOptions): PgBossQueueOptions {
 *   return value;
 * }
 * ```
 */
export interface PgBossQueueOptions {
  /** The work queue's name. Default `'webhooks'`. */
  queue?: string;
  /** The dead-letter queue's name. Default `<queue>-dead`. */
  deadLetterQueue?: string;
  /** Retry policy (applied to the queue, so every job inherits it). */
  retry?: PgBossRetryPolicy;
  /**
   * Seconds a job may stay active before pg-boss counts the attempt as failed and retries it: how
   * long a crashed worker's job waits to run again. Keep it above the handlers' time budget
   * (`runJob`'s `timeoutMs`, by default the receiver's `leaseMs` minus 1 s). Default 60.
   */
  expireInSeconds?: number;
}

/** Names and settings resolved from {@link PgBossQueueOptions}. */
export interface ResolvedQueues {
  queue: string;
  deadLetterQueue: string;
  settings: PgBossQueueSettings;
}

const QUEUE_NAME = /^[A-Za-z0-9_.\-/]{1,100}$/;

/** Defaults applied and names checked (pg-boss accepts letters, digits, `_ . - /`). */
export function resolveQueues(options: PgBossQueueOptions): ResolvedQueues {
  const { queue = 'webhooks', deadLetterQueue = `${queue}-dead`, retry = {}, expireInSeconds = 60 } = options;
  for (const name of [queue, deadLetterQueue]) {
    if (!QUEUE_NAME.test(name))
      throw new TypeError(`pg-boss hand-off: invalid queue name ${JSON.stringify(name)}`);
  }
  if (queue === deadLetterQueue)
    throw new TypeError('pg-boss hand-off: the dead-letter queue must differ from the queue');
  const { limit = 10, delaySeconds = 2, backoff = true, maxDelaySeconds = 600 } = retry;
  return {
    queue,
    deadLetterQueue,
    settings: {
      deadLetter: deadLetterQueue,
      retryLimit: limit,
      retryDelay: delaySeconds,
      retryBackoff: backoff,
      ...(backoff ? { retryDelayMax: maxDelaySeconds } : {}),
      expireInSeconds,
    },
  };
}

/**
 * Creates both queues if missing and applies the retry policy to the work queue (idempotent: run it
 * at every start of a receiver or worker). Dead-lettered jobs are kept 14 days, pg-boss's default.
 */
export async function ensureQueues(boss: PgBossLike, queues: ResolvedQueues): Promise<void> {
  await boss.createQueue(queues.deadLetterQueue);
  await boss.createQueue(queues.queue, queues.settings);
  // createQueue leaves an existing queue as it is: bring its policy up to date.
  await boss.updateQueue(queues.queue, queues.settings);
}
