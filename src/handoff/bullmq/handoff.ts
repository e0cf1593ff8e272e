/**
 * The receiver's side of the BullMQ engine: `createBullmqHandoff({ queue })` is the `handoff` option
 * of a receiver. Each delivery becomes one `queue.add` (one Lua script, one round trip to Redis)
 * with `jobId` derived from the dedup key, so BullMQ's own uniqueness makes the enqueue idempotent.
 * Bounded in an outage (write-gate.ts); opt-in `WAIT` for replicas after each write.
 */

import { WebhookError } from '../../shared/errors.js';
import type { HandoffJob, HandoffTarget } from '../job/types.js';
import type { BullmqAddOptions, BullmqQueueLike } from './bullmq-like.js';
import { bullmqJobId } from './job-id.js';
import { redisClientOf, waitForReplicas } from './redis-client.js';
import { createWriteGate, unavailable } from './write-gate.js';

/**
 * Default attempts of a hand-off job: 10 (the first run and 9 retries) before it becomes a dead
 * letter. With the default backoff the retries span about 8.5 minutes (1 s, 2 s, 4 s … 256 s).
 */
export const DEFAULT_BULLMQ_ATTEMPTS = 10;

/**
 * Default first retry delay, in ms, doubled on each retry (BullMQ's `exponential` backoff).
 */
export const DEFAULT_BULLMQ_BACKOFF_MS = 1_000;

/**
 * Options of {@link createBullmqHandoff}.
 *
 * @example
 * ```ts
 * const options: BullmqHandoffOptions = { queue, attempts: 5, backoffMs: 2_000 };
 * ```
 */
export interface BullmqHandoffOptions {
  /**
   * Your BullMQ `Queue`. On a Redis Cluster give it a hash-tag prefix (`prefix: '{svc-webhooks}'`)
   * so all of the queue's keys live in one slot, as BullMQ's Lua scripts require.
   */
  queue: BullmqQueueLike;
  /** The BullMQ job name. Default `'webhook'`. */
  jobName?: string;
  /** Runs of a job before it becomes a dead letter (BullMQ `attempts`). Default 10. */
  attempts?: number;
  /** First retry delay in ms, doubled each retry (BullMQ `exponential` backoff). Default 1 000. */
  backoffMs?: number;
  /**
   * How completed jobs are kept (BullMQ `removeOnComplete`). Default `{ age: 86_400, count: 10_000 }`
   * (a day, at most 10 000): a kept job makes a late copy of its delivery a no-op in Redis; after it
   * is removed, a copy is enqueued again and the worker's dedup claim answers `duplicate`.
   */
  removeOnComplete?: BullmqAddOptions['removeOnComplete'];
  /** How long the receiver waits for Redis to confirm the job, in ms; then 503. Default 2 000. */
  enqueueTimeoutMs?: number;
  /**
   * Most writes to Redis in flight at once; past it a delivery is refused (503) at once. Default
   * 1 000. It bounds the memory a stalled Redis (frozen, or a network path that drops packets) can
   * hold in the client: each pending write holds its job, about 1.4 × the body (docs/handoff-bullmq.md).
   */
  maxPendingWrites?: number;
  /**
   * Opt-in: after the write, wait until `replicas` replicas acknowledged it (Redis `WAIT`, at most
   * `waitMs`, which must be below the hand-off's `enqueueTimeoutMs`); fewer answers the delivery 503
   * `handoff_unavailable`, so a failover cannot lose a job that was acknowledged. Redis replicates
   * asynchronously otherwise. Off by default.
   */
  waitForReplicas?: { replicas: number; waitMs: number };
}

function positive(name: string, value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) <= 0) {
    throw new WebhookError(
      'options_invalid',
      `createBullmqHandoff: ${name} must be a positive whole number (got ${String(value)}).`,
    );
  }
  return value as number;
}

/**
 * A {@link HandoffTarget} writing to a BullMQ queue: pass it as a receiver's `handoff` option. A job
 * with the same dedup key already in the queue (waiting, delayed, running, kept as completed, or a dead
 * letter) is not added again: BullMQ ignores an `add` whose `jobId` exists.
 *
 * @example
 * ```ts
 * import { Queue } from 'bullmq';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createBullmqHandoff } from '@svc/webhooks/bullmq';
 *
 * const queue = new Queue('svc-webhooks', { connection, prefix: '{svc-webhooks}' });
 * const receiver = createMailReceiver({ secret, dedup, handoff: createBullmqHandoff({ queue }) });
 * ```
 */
export function createBullmqHandoff(options: BullmqHandoffOptions): HandoffTarget {
  if (typeof options?.queue?.add !== 'function') {
    throw new WebhookError('options_invalid', 'createBullmqHandoff: pass { queue } with a BullMQ Queue.');
  }
  const {
    queue,
    jobName = 'webhook',
    attempts = DEFAULT_BULLMQ_ATTEMPTS,
    backoffMs = DEFAULT_BULLMQ_BACKOFF_MS,
    removeOnComplete = { age: 86_400, count: 10_000 },
    enqueueTimeoutMs = 2_000,
    maxPendingWrites = 1_000,
    waitForReplicas: replication,
  } = options;
  positive('attempts', attempts);
  positive('backoffMs', backoffMs);
  positive('enqueueTimeoutMs', enqueueTimeoutMs);
  positive('maxPendingWrites', maxPendingWrites);
  if (replication !== undefined) {
    positive('waitForReplicas.replicas', replication?.replicas);
    positive('waitForReplicas.waitMs', replication?.waitMs);
    if (replication.waitMs >= enqueueTimeoutMs)
      throw new WebhookError(
        'options_invalid',
        `createBullmqHandoff: waitForReplicas.waitMs (${replication.waitMs}) must be below enqueueTimeoutMs (${enqueueTimeoutMs}).`,
      );
  }
  const backoff = { type: 'exponential', delay: backoffMs } as const;
  if (replication && !redisClientOf(queue))
    throw new WebhookError('options_invalid', 'createBullmqHandoff: waitForReplicas needs a BullMQ Queue.');
  const gate = createWriteGate(queue, maxPendingWrites);
  // Any of the queue's keys: they share one hash slot (the `{prefix}` a Cluster requires).
  const slotKey = (queue as { toKey?: (type: string) => string }).toKey?.('id') ?? queue.name;

  async function replicate(job: HandoffJob, signal: AbortSignal): Promise<void> {
    const { client } = gate;
    // The receiver answered 503 already: the sender's retry waits for the replicas again.
    if (!replication || !client || signal.aborted) return;
    const { replicas, waitMs } = replication;
    const acknowledged = await waitForReplicas(client, slotKey, replicas, waitMs);
    if (acknowledged < replicas)
      throw unavailable(
        `${acknowledged} of ${replicas} replicas acknowledged the job of ${job.deliveryId} within ${waitMs} ms`,
      );
  }

  return {
    enqueueTimeoutMs,
    async enqueue(job: HandoffJob, { signal }) {
      await gate.run(signal, async () => {
        await queue.add(jobName, job, {
          jobId: bullmqJobId(job.dedupKey),
          attempts,
          backoff,
          removeOnComplete,
          // Exhausted jobs stay as dead letters until re-driven or removed (listBullmqDeadLetters).
          removeOnFail: false,
        });
        await replicate(job, signal);
      });
      return undefined;
    },
  };
}
