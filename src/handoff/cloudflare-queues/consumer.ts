/**
 * The worker side of the Cloudflare Queues hand-off: a Worker's `queue()` handler. Each message of a
 * batch runs through `receiver.runJob` (claim, the same handlers, settle) and is settled on its own:
 * acknowledged, retried with a delay (`message.retry({ delaySeconds })`), or sent to the dead-letter
 * queue at once for a job no retry can fix. Queues delivers at least once; the dedup claim makes a
 * second delivery of a message, or a second message of one delivery, a `duplicate`.
 */

import type { HandoffRunner } from '../job/types.js';
import { type EngineParts, type LoopJob, reportJob, runAndSettle } from '../run-and-settle.js';
import { checkRunner, leaseAllows, optionsInvalid, positiveInteger } from '../worker-checks.js';
import type { MessageBatchLike, MessageLike, QueueLike } from './queue-like.js';

type WaitUntil = (work: Promise<unknown>) => void;

const FACTORY = 'createCloudflareQueueConsumer';

/** Longest delay of one retry, in seconds (12 hours; Queues accepts no more). */
const MAX_DELAY_SECONDS = 43_200;

/**
 * Options of {@link createCloudflareQueueConsumer}.
 *
 * @example
 * ```ts
 * const options: CloudflareQueueConsumerOptions = { receiver, deadLetterQueue: env.WEBHOOKS_DEAD, backoffSeconds: 30 };
 * ```
 */
export interface CloudflareQueueConsumerOptions {
  /** The receiver whose `.on(...)` handlers run the jobs (configured as in the receiving Worker, with a shared dedup store). */
  receiver: HandoffRunner;
  /**
   * The dead-letter queue's producer binding. A job no retry can fix (`job_invalid`: not written by
   * a receiver holding your secret; `no_handler`: no handler for its event here) is sent there at
   * once, unchanged, and acknowledged. Without it such a job is retried like a failure, until the
   * queue's `max_retries` moves it to its `dead_letter_queue`.
   */
  deadLetterQueue?: QueueLike;
  /** Delay of the first retry of a failed run, in seconds; doubled at each attempt, at most 12 hours. Default 10; 0 retries at once. */
  backoffSeconds?: number;
  /**
   * Handler time budget per run, in ms. Default: the receiver's `leaseMs` − 1 s (it must stay below
   * it). A handler still running then is answered `handler_timeout` (the message is retried, its run
   * finding the claim held until the lease ends); pass the Worker's `ctx` as the consumer's second
   * argument so it keeps running, and its outcome is recorded, after `queue()` returns.
   */
  timeoutMs?: number;
  /** Called after each message settles: its id, attempt (1 = first) and outcome. */
  onJob?(info: {
    id: string;
    attempt: number;
    result: 'handled' | 'duplicate' | 'ignored' | 'retried' | 'dead-lettered';
  }): void;
}

type Outcome = 'handled' | 'duplicate' | 'ignored' | 'retried' | 'dead-lettered';

interface QueuesJob extends LoopJob {
  readonly message: MessageLike;
}

/**
 * A Worker's `queue()` handler for hand-off jobs written by {@link createCloudflareQueueHandoff}.
 * Runs the messages of a batch at once (size batches with the consumer's `max_batch_size`), settles
 * each one on its own, and never rejects: every failure is reported to the receiver's `onError` hooks
 * and logger. Retries wait `backoffSeconds` × 2^(attempt − 1); a run that found the claim held by
 * another run (`delivery_in_progress`) waits until that claim's lease ends.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createCloudflareQueueConsumer } from '@svc/webhooks/cloudflare-queues';
 * import { createD1Store } from '@svc/webhooks/d1';
 *
 * // Queue, D1Database, ExecutionContext: @cloudflare/workers-types
 * interface Env { DB: D1Database; WEBHOOKS_DEAD: Queue; SVC_MAIL_WEBHOOK_SECRET: string }
 *
 * export default {
 *   async queue(batch: MessageBatch, env: Env, ctx: ExecutionContext): Promise<void> {
 *     const receiver = createMailReceiver({
 *       secret: env.SVC_MAIL_WEBHOOK_SECRET,
 *       dedup: createD1Store({ database: env.DB }),
 *     }).on('bounced', async (event) => suppress(event.payload.to));
 *     await createCloudflareQueueConsumer({ receiver, deadLetterQueue: env.WEBHOOKS_DEAD })(batch, ctx);
 *   },
 * };
 * ```
 */
export function createCloudflareQueueConsumer(
  options: CloudflareQueueConsumerOptions,
): (batch: MessageBatchLike, ctx?: { waitUntil(promise: Promise<unknown>): void }) => Promise<void> {
  const { receiver, deadLetterQueue, backoffSeconds = 10, timeoutMs, onJob } = options ?? {};
  checkRunner(FACTORY, receiver);
  if (deadLetterQueue !== undefined && typeof deadLetterQueue?.send !== 'function')
    throw optionsInvalid(FACTORY, 'deadLetterQueue must be a Queues producer binding (env.WEBHOOKS_DEAD).');
  if (!Number.isSafeInteger(backoffSeconds) || backoffSeconds < 0 || backoffSeconds > MAX_DELAY_SECONDS)
    throw optionsInvalid(FACTORY, `backoffSeconds must be a whole number from 0 to ${MAX_DELAY_SECONDS}.`);
  if (onJob !== undefined && typeof onJob !== 'function')
    throw optionsInvalid(FACTORY, 'onJob must be a function.');

  if (timeoutMs !== undefined) positiveInteger(FACTORY, 'timeoutMs', timeoutMs);
  // Known now: a budget the receiver's lease does not outlast would fail every job it takes.
  if (timeoutMs !== undefined && leaseAllows(receiver, timeoutMs) === false)
    throw optionsInvalid(FACTORY, `timeoutMs (${timeoutMs}) must stay below the receiver's leaseMs.`);

  const parts: EngineParts<QueuesJob> = {
    receiver,
    timeoutMs,
    async settle({ message, attempt }, action) {
      if (action.type === 'done') {
        message.ack();
        return 'done';
      }
      if (action.type === 'dead-letter' && deadLetterQueue) {
        try {
          // Unchanged, so re-driving it is sending its body back to the work queue.
          await deadLetterQueue.send(message.body);
          message.ack();
          return 'dead-lettered';
        } catch (sendError) {
          reportJob(
            receiver,
            sendError,
            { data: message.body },
            `Queues message ${message.id} could not be dead-lettered; it is retried`,
          );
        }
      }
      const delaySeconds =
        action.type === 'delay'
          ? Math.max(1, Math.ceil(action.ms / 1_000))
          : backoffSeconds * 2 ** Math.max(0, attempt - 1);
      message.retry({ delaySeconds: Math.min(MAX_DELAY_SECONDS, delaySeconds) });
      return 'retried';
    },
  };

  async function run(message: MessageLike, waitUntil: WaitUntil | undefined): Promise<void> {
    const job = {
      message,
      label: `Queues message ${message.id}`,
      data: message.body,
      attempt: message.attempts,
      waitUntil,
    };
    const { action, settled } = await runAndSettle(job, parts);
    const result = settled === 'done' && action.type === 'done' ? action.verdict.kind : settled;
    try {
      onJob?.({ id: message.id, attempt: message.attempts, result: result as Outcome });
    } catch {
      // the message is settled already
    }
  }

  return async (
    batch: MessageBatchLike,
    ctx?: { waitUntil(promise: Promise<unknown>): void },
  ): Promise<void> => {
    const waitUntil =
      typeof ctx?.waitUntil === 'function' ? (work: Promise<unknown>) => ctx.waitUntil(work) : undefined;
    await Promise.all(
      batch.messages.map((message) =>
        run(message, waitUntil).catch((error: unknown) => {
          // Not reached by design; if it were, the message is left to the queue's own retry.
          reportJob(
            receiver,
            error,
            { data: message.body },
            `Queues message ${message.id} failed in the consumer`,
          );
        }),
      ),
    );
  };
}
