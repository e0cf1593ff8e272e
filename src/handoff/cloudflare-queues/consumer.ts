/**
 * The worker side of the Cloudflare Queues hand-off: a Worker's `queue()` handler. Each message of a
 * batch runs through `receiver.runJob` (claim, the same handlers, settle) and is settled on its own:
 * acknowledged, retried with a delay (`message.retry({ delaySeconds })`), or sent to the dead-letter
 * queue at once for a job no retry can fix. Queues delivers at least once; the dedup claim makes a
 * second delivery of a message, or a second message of one delivery, a `duplicate`.
 */

import type { HandoffRunner } from '../job/types.js';
import { type JobAction, jobAction, jobActionOfError } from '../job-action.js';
import { checkRunner, optionsInvalid } from '../worker-checks.js';
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

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : 'non-error thrown';

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

  const report = (error: unknown, message: MessageLike, text: string): void => {
    const job = (typeof message.body === 'object' && message.body !== null ? message.body : {}) as {
      deliveryId?: unknown;
      dedupKey?: unknown;
    };
    try {
      receiver.reportJobError(error, {
        ...(typeof job.deliveryId === 'string' ? { deliveryId: job.deliveryId } : {}),
        ...(typeof job.dedupKey === 'string' ? { dedupKey: job.dedupKey } : {}),
        message: text,
      });
    } catch {
      // a throwing onError hook must not leave the message unsettled
    }
  };

  const settled = (message: MessageLike, result: Parameters<NonNullable<typeof onJob>>[0]['result']) => {
    try {
      onJob?.({ id: message.id, attempt: message.attempts, result });
    } catch {
      // the message is settled already
    }
  };

  async function run(message: MessageLike, waitUntil: WaitUntil | undefined): Promise<void> {
    const attempt = message.attempts;
    let action: JobAction;
    try {
      const verdict = await receiver.runJob(message.body, {
        attempt,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        // Handlers still running at timeoutMs: the Worker stays alive until they and the store settle.
        ...(waitUntil === undefined ? {} : { waitUntil }),
      });
      action = jobAction(verdict, { attempt });
    } catch (error) {
      // runJob rejects only for options it cannot run with (a timeoutMs ≥ leaseMs)
      action = jobActionOfError(error, { attempt });
    }
    if (action.type === 'done') {
      message.ack();
      return settled(message, action.verdict.kind as 'handled' | 'duplicate' | 'ignored');
    }
    const { error } = action;
    const reason = describe(error);
    if (action.type === 'dead-letter' && deadLetterQueue) {
      try {
        // Unchanged, so re-driving it is sending its body back to the work queue.
        await deadLetterQueue.send(message.body);
        message.ack();
        report(error, message, `Queues message ${message.id} dead-lettered: ${reason}`);
        return settled(message, 'dead-lettered');
      } catch (sendError) {
        report(sendError, message, `Queues message ${message.id} could not be dead-lettered; it is retried`);
      }
    }
    const delaySeconds =
      action.type === 'delay'
        ? Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(action.ms / 1_000)))
        : Math.min(MAX_DELAY_SECONDS, backoffSeconds * 2 ** Math.max(0, attempt - 1));
    message.retry({ delaySeconds });
    if (!action.reported) {
      // Handler failures and timeouts already reached onError and the logger inside runJob.
      report(
        error,
        message,
        `Queues message ${message.id} attempt ${attempt} not run (${error.code}); retried in ${delaySeconds} s`,
      );
    }
    settled(message, 'retried');
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
          report(error, message, `Queues message ${message.id} failed in the consumer`);
        }),
      ),
    );
  };
}
