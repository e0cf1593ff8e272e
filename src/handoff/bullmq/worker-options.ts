/**
 * The options of a BullMQ hand-off worker, their defaults, and their check: a misconfiguration
 * throws `options_invalid` when the worker is created, not on every job it takes.
 */
import type { WorkerOptions } from 'bullmq';
import { optionsInvalid, positiveIntegers, signalNames } from '../worker-checks.js';

/** The factory named in the errors. */
export const FACTORY = 'createBullmqWorker';

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

/** Options checked, defaults set: a misconfiguration throws here rather than on every job. */
export function resolveWorkerOptions(options: BullmqWorkerOptions) {
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
  } = options ?? ({} as BullmqWorkerOptions);
  if (typeof queueName !== 'string' || queueName.length === 0)
    throw optionsInvalid(FACTORY, 'queueName must be the name of the queue the hand-off writes to.');
  if (typeof connection !== 'object' || connection === null)
    throw optionsInvalid(FACTORY, 'connection must be an ioredis connection (or connection options).');
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix.length === 0))
    throw optionsInvalid(FACTORY, 'prefix must be a non-empty string, as given to the Queue.');
  positiveIntegers(FACTORY, { concurrency, timeoutMs, busyDelayMs, shutdownTimeoutMs });
  signalNames(FACTORY, 'shutdownSignals', shutdownSignals);
  if (typeof workerOptions !== 'object' || workerOptions === null)
    throw optionsInvalid(FACTORY, 'workerOptions must be an object of BullMQ worker options.');
  return {
    queueName,
    connection,
    prefix,
    concurrency,
    timeoutMs,
    busyDelayMs,
    shutdownTimeoutMs,
    shutdownSignals,
    workerOptions,
  };
}
