/**
 * The worker side of the pg-boss hand-off: pg-boss fetches a job, `receiver.runJob` claims its dedup
 * key and runs the typed handlers, and the outcome is settled per job: completed, failed (pg-boss
 * retries with its backoff, then dead-letters), or dead-lettered at once for a job that is not a job
 * of this receiver (`job_invalid`: retrying cannot fix it).
 *
 * Each job is fetched and settled on its own: `concurrency` pg-boss workers of one job each, so a
 * slow job holds its own slot only, never the completion of the jobs fetched with it (pg-boss
 * settles a batch once its last job is done).
 */

import type { JobAction } from '../job-action.js';
import { describe, type LoopJob, type Settled } from '../run-and-settle.js';
import { leaseAllows, optionsInvalid } from '../worker-checks.js';
import { createWorkerLoop } from '../worker-loop.js';
import type { PgBossJobLike, PgBossJobResult } from './boss-like.js';
import { ensureQueues } from './queues.js';
import { FACTORY, type PgBossWorkerOptions, resolveWorkerOptions } from './worker-options.js';

/**
 * A running pg-boss hand-off worker.
 *
 * @example
 * ```ts
 * const worker = await createPgBossWorker({ boss, receiver }).start();
 * await worker.stop();
 * ```
 */
export interface PgBossWorker {
  /**
   * Creates the queues if missing and starts fetching jobs. Rejects `options_invalid` when
   * `expireInSeconds` does not outlast the handlers' budget (the receiver's `leaseMs` − 1 s).
   */
  start(): Promise<PgBossWorker>;
  /** Stops fetching, waits up to `shutdownTimeoutMs` for running jobs, then aborts and releases them. */
  stop(): Promise<void>;
}

type Outcome = 'handled' | 'duplicate' | 'ignored';

/** A pg-boss job as the loop runs it; `result` is what its settle answers pg-boss. */
interface PgBossJob extends LoopJob {
  readonly job: PgBossJobLike;
  result?: PgBossJobResult;
}

/**
 * Runs hand-off jobs from pg-boss through `receiver.runJob`, with pg-boss's retries and backoff.
 * A handler gets an `AbortSignal` (aborted when pg-boss expires the job or the worker shuts down)
 * and the attempt number (`context.attempt`, 1 for the first). Every failure is reported to the
 * receiver's `onError` hooks and logger; nothing a job contains can crash the process.
 *
 * @example
 * ```ts
 * import { createCrmReceiver } from '@svc/webhooks';
 * import { createPgBossWorker } from '@svc/webhooks/pg-boss';
 * import { PgBoss } from 'pg-boss';
 *
 * const boss = new PgBoss(process.env.DATABASE_URL!);
 * boss.on('error', (error) => console.error('pg-boss', error));
 * await boss.start();
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, dedup })
 *   .on('deal.won', async (event, { signal, attempt }) => crm.recordWin(event.data, { signal, attempt }));
 * await createPgBossWorker({ boss, receiver, concurrency: 4 }).start(); // SIGTERM: graceful stop
 * ```
 */
export function createPgBossWorker(options: PgBossWorkerOptions): PgBossWorker {
  const {
    boss,
    receiver,
    concurrency,
    pollingIntervalSeconds,
    shutdownTimeoutMs,
    signals,
    onJob,
    onShutdown,
    queues,
  } = resolveWorkerOptions(options);
  const expireMs = (queues.settings.expireInSeconds ?? 0) * 1_000;
  /** One pg-boss worker per slot, each fetching one job at a time. */
  const workerIds: string[] = [];
  let offWork: Promise<unknown> | undefined;

  const result = (job: PgBossJob, status: PgBossJobResult['status'], output: object): PgBossJobResult => ({
    id: job.job.id,
    status,
    output,
  });

  function settle(job: PgBossJob, action: JobAction): Settled {
    if (action.type === 'done') {
      job.result = result(job, 'completed', { result: action.verdict.kind });
      return 'done';
    }
    const { error } = action;
    const output = { code: error.code, reason: describe(error) };
    // Not a job of this receiver (written by hand, another version, the other service): no retry can
    // fix it, so straight to the dead-letter queue with the reason in its output.
    if (action.type === 'dead-letter' && !action.exhausted) {
      job.result = result(job, 'deadletter', output);
      return 'dead-lettered';
    }
    // pg-boss has no delay that spares an attempt: a busy claim fails and is retried with its backoff,
    // and its last attempt goes to the dead-letter queue like any other.
    job.result = result(job, 'failed', output);
    const last = job.maxAttempts !== undefined && job.attempt >= job.maxAttempts;
    return last ? 'dead-lettered' : 'retried';
  }

  const loop = createWorkerLoop<PgBossJob>({
    receiver,
    concurrency,
    shutdownTimeoutMs,
    signals: signals || [],
    settle,
    // Stop fetching; each slot's offWork resolves once its running job settled.
    stopClaiming() {
      offWork = Promise.all(workerIds.map((id) => boss.offWork(queues.queue, { id, wait: true })));
    },
    prepare: () => prepare(),
    afterStop: (drained) => (drained ? offWork : undefined),
    async afterSignal() {
      await boss.stop({ graceful: false });
      await onShutdown?.();
    },
  });

  async function run(data: PgBossJobLike): Promise<PgBossJobResult> {
    const attempt = data.retryCount + 1;
    const job: PgBossJob = {
      job: data,
      label: `pg-boss job ${data.id}`,
      data: data.data,
      attempt,
      maxAttempts: data.retryLimit === undefined ? undefined : data.retryLimit + 1,
      signal: data.signal,
    };
    const { settled } = await loop.run(job);
    const outcome =
      job.result?.status === 'completed' ? (job.result.output as { result: Outcome }).result : undefined;
    onJob?.({
      id: data.id,
      attempt,
      result: outcome ?? (settled === 'dead-lettered' ? 'dead-lettered' : 'failed'),
    });
    return job.result ?? result(job, 'failed', { code: 'internal_error', reason: 'not settled' });
  }

  /** Checks what only the receiver knows, creates the queues and starts one pg-boss worker per slot. */
  async function prepare(): Promise<void> {
    // runJob accepts a budget only below the receiver's leaseMs; accepting `expireMs + 999` means the
    // default budget (leaseMs − 1 s) reaches pg-boss's expiry, which would fail and retry a job whose
    // handlers still run (the retry then finds the claim held).
    if (leaseAllows(receiver, expireMs + 999) === true)
      throw optionsInvalid(
        FACTORY,
        `expireInSeconds (${expireMs / 1_000}) must outlast the handlers' time budget (the receiver's leaseMs − 1 s): raise expireInSeconds or lower leaseMs.`,
      );
    // pg-boss emits 'error' for its own background failures; with no listener Node would end the
    // process, so report them through the receiver when the app attached none.
    if (boss.listenerCount('error') === 0) {
      boss.on('error', (error) => {
        try {
          receiver.reportJobError(error, { message: `pg-boss: ${describe(error)}` });
        } catch {
          // never throw from an event listener
        }
      });
    }
    await ensureQueues(boss, queues);
    for (let slot = 0; slot < concurrency && !loop.stopping; slot++) {
      const id = await boss.work(
        queues.queue,
        // One job per fetch, settled as soon as it is done: a slow job holds its own slot only.
        { batchSize: 1, perJobResults: true, includeMetadata: true, pollingIntervalSeconds },
        async (jobs) => {
          const results = await Promise.all(jobs.map(run));
          // A job was there, so more may be: fetch again at once instead of after the poll interval
          // (pg-boss's burst mode does not apply to batches of one).
          const self = workerIds[slot];
          if (jobs.length > 0 && self !== undefined && !loop.stopping) boss.notifyWorker(self);
          return results;
        },
      );
      workerIds[slot] = id;
    }
  }

  const worker: PgBossWorker = { start: () => loop.start().then(() => worker), stop: loop.stop };
  return worker;
}
