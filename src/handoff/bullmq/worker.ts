/**
 * The worker side of the BullMQ engine: a BullMQ `Worker` whose processor is `receiver.runJob`.
 * BullMQ gives the retries (the job's `attempts` and exponential `backoff`, set at enqueue), the
 * locks and stalled-job recovery; the receiver's dedup claim gives the exactly-once effect.
 */
import { DelayedError, type Job, UnrecoverableError, Worker, type WorkerOptions } from 'bullmq';
import { jobError } from '../../core/handoff/run-job.js';
import type { HandoffRunner } from '../../core/handoff/types.js';
import { isWebhookError } from '../../shared/errors.js';

/**
 * Default time a worker waits on SIGTERM for its running jobs before aborting their handlers'
 * `signal`, in ms: 10 s, inside Kubernetes' default 30 s grace period.
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * Options of {@link createBullmqWorker}.
 *
 * @example
 * ```ts
 * const options: BullmqWorkerOptions = { queueName: 'svc-webhooks', connection, prefix: '{svc-webhooks}', concurrency: 8 };
 * ```
 */
export interface BullmqWorkerOptions {
  /** The queue's name, as given to the `Queue` the receiver's hand-off writes to. */
  queueName: string;
  /** BullMQ connection: an ioredis `Redis` or `Cluster`, or connection options. */
  connection: WorkerOptions['connection'];
  /** The queue's key prefix, as given to the `Queue` (a hash tag such as `{svc-webhooks}` on a cluster). */
  prefix?: string;
  /** Jobs run at once by this worker. Default 1. */
  concurrency?: number;
  /** Handler time budget per job in ms (`runJob`'s `timeoutMs`). Default the receiver's `leaseMs` − 1 s. */
  timeoutMs?: number;
  /** How long a job whose claim another worker holds waits before it is tried again, in ms. Default 1 000. */
  busyDelayMs?: number;
  /** Time allowed to running jobs on shutdown before their `signal` aborts, in ms. Default 10 000. */
  shutdownTimeoutMs?: number;
  /** Signals that shut the worker down gracefully, then end the process. Default `['SIGTERM']`; `[]` for none. */
  shutdownSignals?: readonly NodeJS.Signals[];
  /**
   * Further BullMQ worker options (`lockDuration`, `stalledInterval`…). `maxStalledCount` defaults to
   * 10 here, not BullMQ's 1: a job whose worker crashed is safe to run again (its claim decides).
   */
  workerOptions?: Partial<Omit<WorkerOptions, 'connection' | 'prefix' | 'concurrency' | 'autorun'>>;
}

/**
 * What {@link createBullmqWorker} returns.
 *
 * @example
 * ```ts
 * const { worker, close }: BullmqHandoffWorker = createBullmqWorker(receiver, options);
 * ```
 */
export interface BullmqHandoffWorker {
  /** The BullMQ worker (events, metrics, pause/resume). */
  readonly worker: Worker;
  /**
   * Stops taking jobs and waits for the running ones; past `shutdownTimeoutMs` their handlers'
   * `signal` aborts and a job that then fails is put back without using an attempt. Resolves at the
   * latest another `shutdownTimeoutMs` later (a handler ignoring its signal is left to BullMQ's stalled
   * recovery; its claim keeps any other worker from running it until the lease ends).
   */
  close(): Promise<void>;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= 2048 ? value : undefined;
}

/**
 * Runs a receiver's handlers for the jobs its BullMQ hand-off wrote. Bad job data becomes a dead
 * letter with a `job_invalid` reason (never retried, never a crash); a handler failure is retried
 * per the job's attempts and backoff, then kept as a dead letter (see `listBullmqDeadLetters`).
 * Failures go to the receiver's `onError` hooks and logger.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createBullmqWorker } from '@svc/webhooks/bullmq';
 * import { createRedisStore } from '@svc/webhooks/redis';
 * import { Redis } from 'ioredis';
 *
 * const connection = new Redis({ maxRetriesPerRequest: null });
 * // The same handlers the HTTP server registers (share the module that creates the receiver).
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, dedup: createRedisStore({ client: connection }) })
 *   .on('bounced', async (event, { signal }) => suppress(event.payload.to, { signal }));
 * createBullmqWorker(receiver, { queueName: 'svc-webhooks', connection });
 * ```
 */
export function createBullmqWorker(
  receiver: HandoffRunner,
  options: BullmqWorkerOptions,
): BullmqHandoffWorker {
  const {
    queueName,
    connection,
    prefix,
    concurrency = 1,
    timeoutMs,
    busyDelayMs = 1_000,
    shutdownTimeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS,
    shutdownSignals = ['SIGTERM'],
    workerOptions = {},
  } = options;
  let shuttingDown = false;

  async function processJob(job: Job, token?: string, signal?: AbortSignal): Promise<string> {
    const attempt = job.attemptsMade + 1;
    const data = job.data as { deliveryId?: unknown; key?: unknown } | null | undefined;
    const facts = { deliveryId: text(data?.deliveryId), key: text(data?.key) };
    try {
      const verdict = await receiver.runJob(job.data, { signal, attempt, timeoutMs });
      const failure = jobError(verdict);
      if (failure) throw failure;
      return verdict.kind;
    } catch (error) {
      const code = isWebhookError(error) ? error.code : undefined;
      const reason = error instanceof Error ? error.message : String(error);
      if (code === 'job_invalid' || code === 'no_handler') {
        receiver.reportJobError(error, {
          ...facts,
          message: `BullMQ job ${job.id} dead-lettered: ${reason}`,
        });
        throw new UnrecoverableError(reason);
      }
      // Another run holds the claim (a crashed worker's lease, or a duplicate job): wait without
      // using an attempt. So does a job whose handlers were aborted by a shutdown.
      if ((code === 'delivery_in_progress' || shuttingDown) && token !== undefined) {
        await job.moveToDelayed(Date.now() + busyDelayMs, token);
        throw new DelayedError();
      }
      const attempts = job.opts.attempts ?? 1;
      if (attempt >= attempts) {
        receiver.reportJobError(error, {
          ...facts,
          message: `BullMQ job ${job.id} dead-lettered after ${attempt} attempts: ${reason}`,
        });
      } else if (code !== 'handler_failed' && code !== 'handler_timeout') {
        // Handler failures already reached onError inside runJob; a store outage did not.
        receiver.reportJobError(error, {
          ...facts,
          message: `BullMQ job ${job.id} failed, retried: ${reason}`,
        });
      }
      throw error instanceof Error ? error : new Error(reason);
    }
  }

  const worker = new Worker(queueName, processJob, {
    maxStalledCount: 10,
    ...workerOptions,
    connection,
    concurrency,
    ...(prefix === undefined ? {} : { prefix }),
  });
  // An 'error' event without a listener would end the process.
  worker.on('error', (error) => receiver.reportJobError(error, { message: 'BullMQ worker error' }));

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    closing ??= new Promise<void>((resolve) => {
      shuttingDown = true;
      for (const name of shutdownSignals) process.off(name, onSignal);
      const abort = setTimeout(() => {
        worker.cancelAllJobs('worker shutting down');
        setTimeout(resolve, shutdownTimeoutMs).unref();
      }, shutdownTimeoutMs);
      abort.unref();
      worker.close().then(
        () => {
          clearTimeout(abort);
          resolve();
        },
        (error: unknown) => {
          receiver.reportJobError(error, { message: 'BullMQ worker close failed' });
          resolve();
        },
      );
    });
    return closing;
  }

  function onSignal(signal: NodeJS.Signals): void {
    // Once closed, the signal is raised again without our listener: the process ends as it would have.
    void close().then(() => process.kill(process.pid, signal));
  }
  for (const name of shutdownSignals) process.once(name, onSignal);

  return { worker, close };
}
