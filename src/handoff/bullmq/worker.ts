/**
 * The worker side of the BullMQ engine: a BullMQ `Worker` whose processor is `receiver.runJob`.
 * BullMQ gives the retries (the job's `attempts` and exponential `backoff`, set at enqueue), the
 * locks and stalled-job recovery; the receiver's dedup claim gives the exactly-once effect.
 */
import { DelayedError, type Job, UnrecoverableError, type Worker } from 'bullmq';
import { WebhookError } from '../../shared/errors.js';
import type { HandoffRunner } from '../job/types.js';
import type { JobAction } from '../job-action.js';
import { type LoopJob, reportJob, type Settled } from '../run-and-settle.js';
import { checkRunner, leaseAllows, optionsInvalid } from '../worker-checks.js';
import { createWorkerLoop } from '../worker-loop.js';
import { evictionPolicy, redisClientOf } from './redis-client.js';
import { deadLetterUnreadable, HandoffWorker } from './unreadable-jobs.js';
import { type BullmqWorkerOptions, FACTORY, resolveWorkerOptions } from './worker-options.js';

/**
 * What {@link createBullmqWorker} returns.
 *
 * @example
 * ```ts
 * const { worker, ready, close }: BullmqHandoffWorker = createBullmqWorker(receiver, options);
 * await ready; // options_invalid when its timeoutMs is not below the receiver's leaseMs
 * ```
 */
export interface BullmqHandoffWorker {
  /** The BullMQ worker (events, metrics, pause/resume). */
  readonly worker: Worker;
  /**
   * Resolves once the options were checked against the receiver and the worker takes jobs; rejects
   * with `options_invalid` (and takes no job) when `timeoutMs` is not below the receiver's `leaseMs`.
   */
  readonly ready: Promise<void>;
  /**
   * Stops taking jobs and waits for the running ones; past `shutdownTimeoutMs` their handlers'
   * `signal` aborts and a job that then fails is put back without using an attempt. Resolves at the
   * latest another `shutdownTimeoutMs` later (a handler ignoring its signal is left to BullMQ's stalled
   * recovery; its claim keeps any other worker from running it until the lease ends).
   */
  close(): Promise<void>;
}

interface BullmqJob extends LoopJob {
  readonly job: Job;
  readonly token: string | undefined;
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
  checkRunner(FACTORY, receiver);
  const {
    queueName,
    connection,
    prefix,
    concurrency,
    timeoutMs,
    busyDelayMs,
    shutdownTimeoutMs,
    shutdownSignals,
    workerOptions,
  } = resolveWorkerOptions(options);
  let closing: Promise<void> | undefined;

  async function settle({ job, token }: BullmqJob, action: JobAction): Promise<Settled> {
    if (action.type === 'done') return 'done';
    if (action.type === 'dead-letter') return 'dead-lettered';
    // Another run holds the claim (a crashed worker's lease, or a duplicate job), or the worker is
    // shutting down: wait without using an attempt.
    if (action.type === 'delay' && token !== undefined)
      await job.moveToDelayed(Date.now() + busyDelayMs, token);
    return 'retried';
  }

  const loop = createWorkerLoop<BullmqJob>({
    receiver,
    timeoutMs,
    busyDelayMs,
    concurrency,
    shutdownTimeoutMs,
    signals: shutdownSignals,
    settle,
    /** Checks the handler budget against the receiver's lease, then runs the worker. */
    async prepare() {
      if (timeoutMs !== undefined && leaseAllows(receiver, timeoutMs) === false) {
        throw optionsInvalid(
          FACTORY,
          `timeoutMs (${timeoutMs}) must be below the receiver's leaseMs, so a job's claim outlives its handlers.`,
        );
      }
      worker
        .run()
        .catch((error: unknown) => receiver.reportJobError(error, { message: 'BullMQ worker error' }));
      void warnOnEviction();
    },
    stopClaiming() {
      // BullMQ's close takes no new job and resolves once the running ones settled.
      closing = worker.close().catch((error: unknown) => {
        reportJob(receiver, error, undefined, 'BullMQ worker close failed');
      });
    },
    // A handler ignoring its signal is left to BullMQ's stalled recovery: close is not awaited then.
    afterStop: (drained) => (drained ? closing : undefined),
    // Once closed, the signal is raised again without our listener: the process ends as it would have.
    afterSignal: (signal) => process.kill(process.pid, signal),
  });

  /** BullMQ settles a job by the processor's answer: a value completes it, an error retries or fails it. */
  async function processJob(job: Job, token?: string, signal?: AbortSignal): Promise<string> {
    const run: BullmqJob = {
      job,
      token,
      label: `BullMQ job ${job.id}`,
      data: job.data,
      attempt: job.attemptsMade + 1,
      maxAttempts: job.opts.attempts ?? 1,
      signal,
    };
    const { action, settled } = await loop.run(run);
    if (action.type === 'done') return action.verdict.kind;
    const { error } = action;
    // A refusal is final; a failure on its last attempt is left in BullMQ's failed set.
    if (action.type === 'dead-letter') throw action.exhausted ? error : new UnrecoverableError(error.message);
    if (action.type === 'delay' && token !== undefined && settled === 'retried') throw new DelayedError();
    throw error;
  }

  const worker: HandoffWorker = new HandoffWorker(
    queueName,
    (job: Job, token?: string, signal?: AbortSignal): Promise<string> =>
      worker.unreadable.has(job.id ?? '')
        ? deadLetterUnreadable(worker, job, receiver)
        : processJob(job, token, signal),
    {
      maxStalledCount: 10,
      ...workerOptions,
      connection,
      concurrency,
      autorun: false,
      ...(prefix === undefined ? {} : { prefix }),
    },
  );
  // An 'error' event without a listener would end the process.
  worker.on('error', (error) => receiver.reportJobError(error, { message: 'BullMQ worker error' }));

  /** Redis may evict jobs it acknowledged unless `maxmemory-policy` is `noeviction` (docs/handoff-bullmq.md "Redis requirements"). */
  async function warnOnEviction(): Promise<void> {
    const client = await redisClientOf(worker)?.catch(() => undefined);
    const policy = client && (await evictionPolicy(client));
    if (policy === undefined || policy === 'noeviction') return;
    receiver.reportJobError(
      new WebhookError(
        'options_invalid',
        `Redis runs with maxmemory-policy ${policy}: under memory pressure it may evict hand-off jobs it acknowledged. Set maxmemory-policy noeviction (docs/handoff-bullmq.md#redis-requirements).`,
      ),
      { message: `BullMQ worker for ${queueName}: Redis may evict jobs` },
    );
  }

  // Without `timeoutMs` there is nothing to ask the receiver: the worker runs at once, as with autorun.
  const ready = loop.start().catch(async (error: unknown) => {
    receiver.reportJobError(error, { message: `BullMQ worker for ${queueName} not started` });
    await loop.stop();
    throw error;
  });
  ready.catch(() => undefined); // reported through onError already: awaiting `ready` is optional
  return { worker, ready, close: loop.stop };
}
