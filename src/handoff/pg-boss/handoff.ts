/**
 * The receiver side of the pg-boss hand-off: one `send` per new delivery, with the job id derived
 * from the dedup key, so a retry of a delivery whose job exists stores nothing and is acknowledged.
 */
import type { EnqueueResult, HandoffJob, HandoffTarget } from '../job/types.js';
import type { PgBossLike } from './boss-like.js';
import { pgBossJobId } from './job-id.js';
import { ensureQueues, type PgBossQueueOptions, resolveQueues } from './queues.js';

/**
 * Options of {@link createPgBossHandoff}.
 *
 * @example
 * ```ts
 * import type { PgBossHandoffOptions } from '@svc/webhooks/pg-boss';
 *
 * const options: PgBossHandoffOptions = { boss, queue: 'webhooks', enqueueTimeoutMs: 1_500 };
 * ```
 */
export interface PgBossHandoffOptions extends PgBossQueueOptions {
  /** Your started `PgBoss` instance (pg-boss 12); never stopped by us. */
  boss: PgBossLike;
  /**
   * How long a delivery waits for Postgres to confirm the job, in ms; past it the delivery is
   * answered 503 with `Retry-After`. Default 2 000.
   */
  enqueueTimeoutMs?: number;
}

/**
 * A receiver's `handoff` target on pg-boss, plus the queue setup.
 *
 * @example
 * ```ts
 * const handoff = createPgBossHandoff({ boss });
 * await handoff.createQueues();
 * ```
 */
export interface PgBossHandoff extends HandoffTarget {
  readonly enqueueTimeoutMs: number;
  /** The work queue. */
  readonly queue: string;
  /** The dead-letter queue. */
  readonly deadLetterQueue: string;
  /** Creates the work and dead-letter queues if missing and applies the retry policy (idempotent). */
  createQueues(): Promise<void>;
}

/**
 * Hand-off mode on pg-boss (PostgreSQL): verified deliveries become jobs in your pg-boss queue and
 * are acknowledged once Postgres committed them; workers ({@link createPgBossWorker}) run the
 * handlers. Uses your own `PgBoss` instance and its connection.
 *
 * Idempotent: the job id is {@link pgBossJobId} of the dedup key, so a delivery sent again while its
 * job is queued, running, completed (kept 7 days by pg-boss) or failed stores nothing and is
 * answered 2xx, including when the first 2xx never reached the sender.
 *
 * @example
 * ```ts
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createPgBossHandoff } from '@svc/webhooks/pg-boss';
 * import { PgBoss } from 'pg-boss';
 *
 * const boss = new PgBoss(process.env.DATABASE_URL!);
 * boss.on('error', (error) => console.error('pg-boss', error));
 * await boss.start();
 * const handoff = createPgBossHandoff({ boss });
 * await handoff.createQueues();
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, handoff });
 * ```
 */
export function createPgBossHandoff(options: PgBossHandoffOptions): PgBossHandoff {
  const { boss, enqueueTimeoutMs = 2_000 } = options;
  if (typeof boss?.send !== 'function') {
    throw new TypeError('createPgBossHandoff: `boss` must be a pg-boss PgBoss instance (pg-boss 12).');
  }
  const queues = resolveQueues(options);
  const { queue } = queues;
  return {
    enqueueTimeoutMs,
    queue,
    deadLetterQueue: queues.deadLetterQueue,
    createQueues: () => ensureQueues(boss, queues),
    async enqueue(job: HandoffJob): Promise<EnqueueResult> {
      // One INSERT … ON CONFLICT DO NOTHING: `null` means a job with this id is already stored
      // (committed: a concurrent insert of the same id waits for the first one's commit).
      const id = await boss.send(queue, job as unknown as object, { id: pgBossJobId(job.dedupKey) });
      return id === null ? 'duplicate' : 'enqueued';
    },
  };
}
