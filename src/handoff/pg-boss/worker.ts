/**
 * The worker side of the pg-boss hand-off: pg-boss fetches a job, `receiver.runJob` claims its dedup
 * key and runs the typed handlers, and the outcome is settled per job: completed, failed (pg-boss
 * retries with its backoff, then dead-letters), or dead-lettered at once for a job that is not a job
 * of this receiver (`job_invalid`: retrying cannot fix it).
 */

import { jobError } from '../../core/handoff/run-job.js';
import type { HandoffRunner } from '../../core/handoff/types.js';
import { isWebhookError } from '../../shared/errors.js';
import type { PgBossJobLike, PgBossJobResult, PgBossLike } from './boss-like.js';
import { ensureQueues, type PgBossQueueOptions, resolveQueues } from './queues.js';

/**
 * Options of {@link createPgBossWorker}.
 *
 * @example
 * ```ts
 * import type { PgBossWorkerOptions } from '@svc/webhooks/pg-boss';
 *
 * const options: PgBossWorkerOptions = { boss, receiver, concurrency: 4, shutdownTimeoutMs: 20_000 };
 * ```
 */
export interface PgBossWorkerOptions extends PgBossQueueOptions {
  /** Your started `PgBoss` instance; stopped by us only on a shutdown signal (see `signals`). */
  boss: PgBossLike;
  /** The receiver whose `.on(...)` handlers run the jobs (configured as in the receiving process). */
  receiver: HandoffRunner;
  /**
   * Jobs fetched and run at once by this process (pg-boss `batchSize`; each job is settled on its own,
   * once the whole batch is done). Default 4.
   */
  concurrency?: number;
  /** How often an idle worker asks Postgres for jobs, seconds (≥ 0.5). Default 0.5. */
  pollingIntervalSeconds?: number;
  /** On shutdown, how long running jobs may take to finish before they are aborted and released. Default 10 000. */
  shutdownTimeoutMs?: number;
  /**
   * Signals that shut the worker down gracefully (stop fetching, finish or release the running jobs,
   * stop `boss`, then let the process exit). Default `['SIGTERM', 'SIGINT']`; `false` to handle
   * signals yourself and call `stop()`.
   */
  signals?: readonly NodeJS.Signals[] | false;
  /**
   * Called after a shutdown signal stopped the worker and `boss`: close your own resources here (a
   * dedup store's pool, for one) so the process can exit.
   */
  onShutdown?(): void | Promise<void>;
  /** Called after each job settles: its pg-boss id, outcome and attempt (1 = first). */
  onJob?(info: {
    id: string;
    attempt: number;
    result: 'handled' | 'duplicate' | 'ignored' | 'failed' | 'dead-lettered';
  }): void;
}

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
  /** Creates the queues if missing and starts fetching jobs. */
  start(): Promise<PgBossWorker>;
  /** Stops fetching, waits up to `shutdownTimeoutMs` for running jobs, then aborts and releases them. */
  stop(): Promise<void>;
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : 'non-error thrown';

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
    concurrency = 4,
    pollingIntervalSeconds = 0.5,
    shutdownTimeoutMs = 10_000,
    signals = ['SIGTERM', 'SIGINT'],
    onJob,
    onShutdown,
  } = options;
  if (typeof boss?.work !== 'function') {
    throw new TypeError('createPgBossWorker: `boss` must be a pg-boss PgBoss instance (pg-boss 12).');
  }
  if (typeof receiver?.runJob !== 'function') {
    throw new TypeError('createPgBossWorker: `receiver` must be a receiver created by this library.');
  }
  const queues = resolveQueues(options);
  // Aborted when a shutdown's deadline passes: the handlers stop, the jobs fail and are retried.
  const shutdown = new AbortController();
  let workerId: string | undefined;
  let stopping: Promise<void> | undefined;

  const report = (error: unknown, job: PgBossJobLike, message: string) => {
    const data = (typeof job.data === 'object' && job.data !== null ? job.data : {}) as {
      deliveryId?: unknown;
      key?: unknown;
    };
    try {
      receiver.reportJobError(error, {
        ...(typeof data.deliveryId === 'string' ? { deliveryId: data.deliveryId } : {}),
        ...(typeof data.key === 'string' ? { key: data.key } : {}),
        message,
      });
    } catch {
      // a throwing onError hook must not fail the job's settlement
    }
  };

  async function run(job: PgBossJobLike): Promise<PgBossJobResult> {
    const attempt = job.retryCount + 1;
    const signal = job.signal ? AbortSignal.any([job.signal, shutdown.signal]) : shutdown.signal;
    try {
      const verdict = await receiver.runJob(job.data, { attempt, signal });
      const failure = jobError(verdict);
      if (failure) throw failure;
      const result = verdict.kind as 'handled' | 'duplicate' | 'ignored';
      onJob?.({ id: job.id, attempt, result });
      return { id: job.id, status: 'completed', output: { result } };
    } catch (error) {
      const code = isWebhookError(error) ? error.code : 'handler_failed';
      const reason = describe(error);
      if (code === 'job_invalid' || code === 'no_handler') {
        // Not a job of this receiver (written by hand, another version, the other service): no
        // retry can fix it, so straight to the dead-letter queue with the reason in its output.
        report(error, job, `pg-boss job ${job.id} dead-lettered: ${reason}`);
        onJob?.({ id: job.id, attempt, result: 'dead-lettered' });
        return { id: job.id, status: 'deadletter', output: { code, reason } };
      }
      const last = job.retryLimit !== undefined && job.retryCount >= job.retryLimit;
      if (last) {
        report(
          error,
          job,
          `pg-boss job ${job.id} dead-lettered after ${attempt} attempts (${code}): ${reason}`,
        );
      } else if (code !== 'handler_failed' && code !== 'handler_timeout') {
        // Handler failures and timeouts already reached onError and the logger inside runJob; a busy
        // claim or an unreachable dedup store did not.
        report(error, job, `pg-boss job ${job.id} attempt ${attempt} not run (${code}); pg-boss retries it`);
      }
      onJob?.({ id: job.id, attempt, result: 'failed' });
      return { id: job.id, status: 'failed', output: { code, reason } };
    }
  }

  const onSignal = () => {
    void worker.stop().finally(async () => {
      try {
        await boss.stop({ graceful: false });
        await onShutdown?.();
      } catch (error) {
        receiver.reportJobError(error, { message: `pg-boss worker shutdown: ${describe(error)}` });
      }
      for (const name of signals || []) process.off(name, onSignal);
    });
  };

  const worker: PgBossWorker = {
    async start() {
      if (workerId !== undefined) return worker;
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
      workerId = await boss.work(
        queues.queue,
        {
          // One fetch takes up to `concurrency` jobs, run side by side and settled each on its own.
          // While fetches come back full, pg-boss fetches again at once; an idle worker polls.
          batchSize: concurrency,
          burstWhenBatchFull: true,
          perJobResults: true,
          includeMetadata: true,
          pollingIntervalSeconds,
        },
        async (jobs) => {
          const results = await Promise.all(jobs.map(run));
          // A full batch means more may be waiting: fetch again at once instead of after the poll
          // interval (pg-boss's burst mode does this only for batches of more than one job).
          if (jobs.length >= concurrency && workerId !== undefined) boss.notifyWorker(workerId);
          return results;
        },
      );
      for (const name of signals || []) process.once(name, onSignal);
      return worker;
    },
    stop() {
      stopping ??= (async () => {
        for (const name of signals || []) process.off(name, onSignal);
        if (workerId === undefined) return;
        const finished = boss.offWork(queues.queue, { id: workerId, wait: true });
        let timer: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), shutdownTimeoutMs);
        });
        if ((await Promise.race([finished, deadline])) === 'late') {
          // Release: the handlers see their signal abort, runJob releases the claim, the job fails
          // and pg-boss runs it again elsewhere.
          shutdown.abort(new Error('worker shutting down'));
          await finished;
        }
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
  return worker;
}
