/**
 * The options of the SQS long-poll worker, their defaults and their check: a misconfiguration throws
 * `options_invalid` when the worker is created.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { HandoffRunner } from '../job/types.js';
import { checkRunner, optionsInvalid, positiveInteger, signalNames } from '../worker-checks.js';

/** The factory named in the errors. */
export const FACTORY = 'createSqsWorker';

/**
 * Options of {@link createSqsWorker}.
 *
 * @example
 * ```ts
 * const options: SqsWorkerOptions = { client, queueUrl, receiver, concurrency: 10 };
 * ```
 */
export interface SqsWorkerOptions {
  /** Your `SQSClient` (`@aws-sdk/client-sqs` v3); never destroyed by the worker. */
  client: Pick<SQSClient, 'send'>;
  /** The work queue's URL, as given to `createSqsHandoff`. */
  queueUrl: string;
  /** The receiver whose `.on(...)` handlers run the jobs, with a shared dedup store. */
  receiver: HandoffRunner;
  /** Messages run at once (received 10 at most per call). Default 10. */
  concurrency?: number;
  /** Long-poll wait of each receive, in seconds (0 to 20). Default 20. */
  waitTimeSeconds?: number;
  /** Handler time budget per run, in ms. Default the receiver's `leaseMs` − 1 s; below the queue's visibility timeout. */
  timeoutMs?: number;
  /** Retry backoff: a failed message stays hidden this × 2^(attempt − 1) seconds, at most 12 hours. Default 10. */
  backoffSeconds?: number;
  /** How long a message whose claim another run holds stays hidden, in ms. Default 5 000. */
  busyDelayMs?: number;
  /** On shutdown, time allowed to running messages before their `signal` aborts, in ms. Default 10 000. */
  shutdownTimeoutMs?: number;
  /** Signals that stop the worker gracefully. Default `['SIGTERM', 'SIGINT']`; `[]` to call `stop()` yourself. */
  signals?: readonly NodeJS.Signals[];
}

/** Options checked, defaults set. */
export function resolveSqsWorkerOptions(options: SqsWorkerOptions) {
  const {
    client,
    queueUrl,
    receiver,
    concurrency = 10,
    waitTimeSeconds = 20,
    timeoutMs,
    backoffSeconds = 10,
    busyDelayMs = 5_000,
    shutdownTimeoutMs = 10_000,
    signals = ['SIGTERM', 'SIGINT'],
  } = options ?? ({} as SqsWorkerOptions);
  if (typeof client?.send !== 'function')
    throw optionsInvalid(FACTORY, 'client must be an SQSClient of @aws-sdk/client-sqs.');
  if (typeof queueUrl !== 'string' || !/^https?:\/\//.test(queueUrl))
    throw optionsInvalid(FACTORY, 'queueUrl must be the queue URL.');
  if (!Number.isSafeInteger(waitTimeSeconds) || waitTimeSeconds < 0 || waitTimeSeconds > 20)
    throw optionsInvalid(FACTORY, 'waitTimeSeconds must be a whole number from 0 to 20.');
  if (!Number.isSafeInteger(backoffSeconds) || backoffSeconds < 0 || backoffSeconds > 43_200)
    throw optionsInvalid(FACTORY, 'backoffSeconds must be a whole number from 0 to 43 200.');
  if (timeoutMs !== undefined) positiveInteger(FACTORY, 'timeoutMs', timeoutMs);
  return {
    client,
    queueUrl,
    receiver: checkRunner(FACTORY, receiver),
    concurrency: positiveInteger(FACTORY, 'concurrency', concurrency),
    waitTimeSeconds,
    timeoutMs,
    backoffSeconds,
    busyDelayMs: positiveInteger(FACTORY, 'busyDelayMs', busyDelayMs),
    shutdownTimeoutMs: positiveInteger(FACTORY, 'shutdownTimeoutMs', shutdownTimeoutMs),
    signals: signalNames(FACTORY, 'signals', signals),
  };
}
