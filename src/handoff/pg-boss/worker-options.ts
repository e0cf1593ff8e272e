/**
 * The options of a pg-boss hand-off worker, their defaults, and their check: a misconfiguration
 * throws `options_invalid` when the worker is created, not on every job it takes.
 */
import type { HandoffRunner } from '../job/types.js';
import { checkRunner, optionsInvalid, positiveInteger, signalNames } from '../worker-checks.js';
import type { PgBossLike } from './boss-like.js';
import { type PgBossQueueOptions, type ResolvedQueues, resolveQueues } from './queues.js';

/** The factory named in the errors. */
export const FACTORY = 'createPgBossWorker';

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
   * Jobs run at once by this process: as many pg-boss workers, each fetching, running and settling
   * one job at a time, so a slow job never holds another's completion. Default 4.
   */
  concurrency?: number;
  /** How often each idle slot asks Postgres for jobs, seconds (≥ 0.5). Default 0.5. */
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

/** Options checked, defaults set, queue names resolved. */
export function resolveWorkerOptions(options: PgBossWorkerOptions) {
  const {
    boss,
    receiver,
    concurrency = 4,
    pollingIntervalSeconds = 0.5,
    shutdownTimeoutMs = 10_000,
    signals = ['SIGTERM', 'SIGINT'],
    onJob,
    onShutdown,
  } = options ?? ({} as PgBossWorkerOptions);
  if (typeof boss?.work !== 'function')
    throw optionsInvalid(FACTORY, '`boss` must be a pg-boss PgBoss instance (pg-boss 12).');
  checkRunner(FACTORY, receiver);
  positiveInteger(FACTORY, 'concurrency', concurrency);
  if (!Number.isFinite(pollingIntervalSeconds) || pollingIntervalSeconds < 0.5)
    throw optionsInvalid(
      FACTORY,
      `pollingIntervalSeconds must be 0.5 or more (got ${String(pollingIntervalSeconds)}).`,
    );
  positiveInteger(FACTORY, 'shutdownTimeoutMs', shutdownTimeoutMs);
  if (signals !== false) signalNames(FACTORY, 'signals', signals);
  for (const [name, hook] of Object.entries({ onJob, onShutdown })) {
    if (hook !== undefined && typeof hook !== 'function')
      throw optionsInvalid(FACTORY, `${name} must be a function.`);
  }
  let queues: ResolvedQueues;
  try {
    queues = resolveQueues(options);
  } catch (error) {
    throw optionsInvalid(FACTORY, error instanceof Error ? error.message : String(error));
  }
  return {
    boss,
    receiver: receiver as HandoffRunner,
    concurrency,
    pollingIntervalSeconds,
    shutdownTimeoutMs,
    signals,
    onJob,
    onShutdown,
    queues,
  };
}
