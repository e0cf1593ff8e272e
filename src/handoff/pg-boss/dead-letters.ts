/**
 * Dead letters of the pg-boss hand-off: jobs that failed their last attempt, or were refused as not
 * being jobs of the receiver, copied by pg-boss into the dead-letter queue. Listed with the reason
 * of the last failure, and re-driven (moved back to the work queue as new jobs) once fixed.
 */

import { jobFields } from '../run-and-settle.js';
import type { PgBossLike, PgBossStoredJobLike } from './boss-like.js';
import { type PgBossQueueOptions, resolveQueues } from './queues.js';

/**
 * One dead-lettered delivery.
 *
 * @example
 * ```ts
 * import type { PgBossDeadLetter } from '@svc/webhooks/pg-boss';
 *
 * const line = (d: PgBossDeadLetter) => `${d.deliveryId ?? '?'} ${d.event ?? '?'}: ${d.reason}`;
 * ```
 */
export interface PgBossDeadLetter {
  /** The job's id in the dead-letter queue (what {@link redrivePgBossDeadLetters} takes). */
  id: string;
  /** The id the job had in the work queue. */
  sourceId: string | null;
  deliveryId: string | undefined;
  event: string | undefined;
  /** The dedup key. */
  dedupKey: string | undefined;
  /** Why it failed: the last attempt's error code and message, or why the job was refused. */
  reason: string;
  /** The error code of the last failure (`handler_failed`, `job_invalid`, …) when known. */
  code: string | undefined;
  /** Attempts the job had in the work queue. */
  attempts: number | undefined;
  /** When it was dead-lettered. */
  deadLetteredAt: Date;
  /** The job data as stored (a hand-off job, or whatever was written by hand). */
  data: unknown;
}

/**
 * Options of {@link listPgBossDeadLetters} and {@link redrivePgBossDeadLetters}.
 *
 * @example
 * ```ts
 * const options: PgBossDeadLetterOptions = { boss, queue: 'webhooks', limit: 100 };
 * ```
 */
export interface PgBossDeadLetterOptions extends PgBossQueueOptions {
  boss: PgBossLike;
  /** Most jobs to list or re-drive in one call, oldest first. Default 1 000. */
  limit?: number;
}

function field(data: unknown, name: string): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

function failure(job: PgBossStoredJobLike): { code: string | undefined; reason: string } {
  // pg-boss stores the source job's output on the dead letter as `sourceOutput` in some versions
  // and as `output` in others; our worker writes `{ code, reason }`, pg-boss `{ message }`.
  const raw = job as unknown as { sourceOutput?: unknown; output?: unknown };
  for (const output of [raw.sourceOutput, raw.output]) {
    const code = field(output, 'code');
    const reason = field(output, 'reason') ?? field(output, 'message');
    if (reason) return { code, reason: code ? `${code}: ${reason}` : reason };
  }
  return { code: undefined, reason: 'unknown (no failure output recorded)' };
}

/**
 * The dead-lettered jobs of a hand-off queue, oldest first. The same rows in SQL (pg-boss's default
 * schema `pgboss`): `SELECT id, data->>'deliveryId', data->>'event', output, source_output
 * FROM pgboss.job WHERE name = 'webhooks-dead' AND state = 'created' ORDER BY created_on;`.
 *
 * @example
 * ```ts
 * import { listPgBossDeadLetters } from '@svc/webhooks/pg-boss';
 *
 * for (const dead of await listPgBossDeadLetters({ boss })) console.log(dead.deliveryId, dead.reason);
 * ```
 */
export async function listPgBossDeadLetters(options: PgBossDeadLetterOptions): Promise<PgBossDeadLetter[]> {
  const { boss, limit = 1_000 } = options;
  const { deadLetterQueue } = resolveQueues(options);
  const jobs = await boss.findJobs(deadLetterQueue, { queued: true, limit });
  return jobs.map((job) => {
    const { code, reason } = failure(job);
    const { deliveryId, event, dedupKey } = jobFields(job.data);
    const retries = job.sourceRetryCount;
    return {
      id: job.id,
      sourceId: job.sourceId ?? null,
      deliveryId,
      event,
      dedupKey,
      reason,
      code,
      attempts: typeof retries === 'number' ? retries + 1 : undefined,
      deadLetteredAt: job.createdOn,
      data: job.data,
    };
  });
}

/**
 * Moves dead-lettered jobs back to the work queue as new jobs (all of them, or those in `ids`), to
 * run again once the cause is fixed; resolves how many moved. A delivery whose handlers completed in
 * the meantime is not run twice: the worker's dedup claim finds it completed. pg-boss's own
 * `boss.redrive('<queue>-dead', { ids })` does the same.
 *
 * @example
 * ```ts
 * import { listPgBossDeadLetters, redrivePgBossDeadLetters } from '@svc/webhooks/pg-boss';
 *
 * const dead = await listPgBossDeadLetters({ boss });
 * await redrivePgBossDeadLetters({ boss, ids: dead.filter((d) => d.code === 'handler_failed').map((d) => d.id) });
 * ```
 */
export async function redrivePgBossDeadLetters(
  options: PgBossDeadLetterOptions & { ids?: readonly string[] },
): Promise<number> {
  const { boss, limit = 1_000, ids } = options;
  const { deadLetterQueue } = resolveQueues(options);
  if (ids && ids.length === 0) return 0;
  return boss.redrive(deadLetterQueue, { limit, ...(ids ? { ids: [...ids] } : {}) });
}
