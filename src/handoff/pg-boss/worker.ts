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

import { type JobAction, jobAction, jobActionOfError } from '../job-action.js';
import { leaseAllows, optionsInvalid } from '../worker-checks.js';
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
    concurrency,
    pollingIntervalSeconds,
    shutdownTimeoutMs,
    signals,
    onJob,
    onShutdown,
    queues,
  } = resolveWorkerOptions(options);
  const expireMs = (queues.settings.expireInSeconds ?? 0) * 1_000;
  // Aborted when a shutdown's deadline passes: the handlers stop, the jobs fail and are retried.
  const shutdown = new AbortController();
  /** One pg-boss worker per slot, each fetching one job at a time. */
  const workerIds: string[] = [];
  let starting: Promise<PgBossWorker> | undefined;
  let stopping: Promise<void> | undefined;

  const report = (error: unknown, job: PgBossJobLike, message: string, deadLetter = false) => {
    const data = (typeof job.data === 'object' && job.data !== null ? job.data : {}) as {
      deliveryId?: unknown;
      dedupKey?: unknown;
    };
    try {
      receiver.reportJobError(error, {
        ...(typeof data.deliveryId === 'string' ? { deliveryId: data.deliveryId } : {}),
        ...(typeof data.dedupKey === 'string' ? { dedupKey: data.dedupKey } : {}),
        message,
        ...(deadLetter ? { deadLetter } : {}),
      });
    } catch {
      // a throwing onError hook must not fail the job's settlement
    }
  };

  async function run(job: PgBossJobLike): Promise<PgBossJobResult> {
    const attempt = job.retryCount + 1;
    const signal = job.signal ? AbortSignal.any([job.signal, shutdown.signal]) : shutdown.signal;
    const maxAttempts = job.retryLimit === undefined ? undefined : job.retryLimit + 1;
    let action: JobAction;
    try {
      action = jobAction(await receiver.runJob(job.data, { attempt, signal }), { attempt, maxAttempts });
    } catch (error) {
      action = jobActionOfError(error, { attempt, maxAttempts });
    }
    if (action.type === 'done') {
      const result = action.verdict.kind as 'handled' | 'duplicate' | 'ignored';
      onJob?.({ id: job.id, attempt, result });
      return { id: job.id, status: 'completed', output: { result } };
    }
    const { error } = action;
    const { code } = error;
    const reason = describe(error);
    if (action.type === 'dead-letter' && !action.exhausted) {
      // Not a job of this receiver (written by hand, another version, the other service): no
      // retry can fix it, so straight to the dead-letter queue with the reason in its output.
      report(error, job, `pg-boss job ${job.id} dead-lettered: ${reason}`, true);
      onJob?.({ id: job.id, attempt, result: 'dead-lettered' });
      return { id: job.id, status: 'deadletter', output: { code, reason } };
    }
    // pg-boss has no delay that spares an attempt: a busy claim fails and is retried with its backoff,
    // and its last attempt goes to the dead-letter queue like any other.
    const last = maxAttempts !== undefined && attempt >= maxAttempts;
    if (last)
      report(
        error,
        job,
        `pg-boss job ${job.id} dead-lettered after ${attempt} attempts (${code}): ${reason}`,
        true,
      );
    else if (!action.reported)
      report(error, job, `pg-boss job ${job.id} attempt ${attempt} not run (${code}); pg-boss retries it`);
    onJob?.({ id: job.id, attempt, result: 'failed' });
    return { id: job.id, status: 'failed', output: { code, reason } };
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

  /** Checks what only the receiver knows, creates the queues and starts one pg-boss worker per slot. */
  async function begin(): Promise<PgBossWorker> {
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
    for (let slot = 0; slot < concurrency && stopping === undefined; slot++) {
      const id = await boss.work(
        queues.queue,
        // One job per fetch, settled as soon as it is done: a slow job holds its own slot only.
        { batchSize: 1, perJobResults: true, includeMetadata: true, pollingIntervalSeconds },
        async (jobs) => {
          const results = await Promise.all(jobs.map(run));
          // A job was there, so more may be: fetch again at once instead of after the poll interval
          // (pg-boss's burst mode does not apply to batches of one).
          const self = workerIds[slot];
          if (jobs.length > 0 && self !== undefined && stopping === undefined) boss.notifyWorker(self);
          return results;
        },
      );
      workerIds[slot] = id;
    }
    for (const name of signals || []) process.once(name, onSignal);
    return worker;
  }

  const worker: PgBossWorker = {
    start() {
      starting ??= begin();
      return starting;
    },
    stop() {
      stopping ??= (async () => {
        for (const name of signals || []) process.off(name, onSignal);
        await starting?.catch(() => undefined);
        if (workerIds.length === 0) return;
        const finished = Promise.all(
          workerIds.map((id) => boss.offWork(queues.queue, { id, wait: true })),
        ).then(() => undefined);
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
