/**
 * The receiver side of the Cloudflare Queues hand-off: one `send` per delivery. Queues has no
 * producer-chosen message id, so unlike BullMQ and pg-boss a copy of a delivery sent again becomes a
 * second message; the consumer's dedup claim makes it a `duplicate` (docs/handoff-cloudflare-queues.md).
 */
import type { EnqueueResult, HandoffJob, HandoffTarget } from '../job/types.js';
import type { QueueLike } from './queue-like.js';

/** Largest message Cloudflare Queues accepts, in bytes (128 KB). */
const MAX_MESSAGE_BYTES = 128_000;

/**
 * Largest delivery body a job carries here: its base64 (4/3 of it, 87,384 characters) leaves about
 * 40 KB of the message for the other fields, which the receiver bounds far below that.
 */
const MAX_BODY_BYTES = 65_536;

const encoder = new TextEncoder();

/**
 * A receiver's `handoff` target on Cloudflare Queues, as the receiver sees it.
 *
 * @example
 * ```ts
 * const handoff = createCloudflareQueueHandoff({ queue: env.WEBHOOKS });
 * console.log(handoff.maxBodyBytes); // 65536
 * ```
 *
 * @example
 * ```ts
 * import type { CloudflareQueueHandoff } from '@svc/webhooks/cloudflare-queues';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: CloudflareQueueHandoff): CloudflareQueueHandoff {
 *   return value;
 * }
 * ```
 */
export type CloudflareQueueHandoff = HandoffTarget & {
  readonly enqueueTimeoutMs: number;
  readonly maxBodyBytes: number;
};

/**
 * Hand-off mode on Cloudflare Queues: a verified delivery becomes a message (the job, as JSON) on
 * your queue and is acknowledged once the queue accepted it; a Worker's `queue()` handler
 * ({@link createCloudflareQueueConsumer}) runs the handlers. A receiver with this target accepts
 * bodies up to 64 KiB by default (a message holds 128 KB); a larger `maxBodyBytes` is refused when
 * the receiver is created.
 *
 * Not idempotent on the dedup key: a delivery sent again (the sender's retry after a lost answer, a
 * resend by API) is a second message, answered `queued` again; its run finds the first one's claim
 * and settles as a `duplicate`, so handlers still run once per delivery (docs/handoff-cloudflare-queues.md).
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createCloudflareQueueHandoff } from '@svc/webhooks/cloudflare-queues';
 *
 * interface Env { WEBHOOKS: Queue; SVC_MAIL_WEBHOOK_SECRET: string } // Queue: @cloudflare/workers-types
 *
 * export default {
 *   fetch(request: Request, env: Env): Promise<Response> {
 *     const handoff = createCloudflareQueueHandoff({ queue: env.WEBHOOKS });
 *     return createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET, handoff }).handle(request);
 *   },
 * };
 * ```
 */
export function createCloudflareQueueHandoff(options: {
  /** The queue's producer binding (`env.WEBHOOKS`). */
  queue: QueueLike;
  /**
   * How long a delivery waits for the queue to accept the message, in ms; past it the delivery is
   * answered 503 with `Retry-After`. Default 2 000.
   */
  enqueueTimeoutMs?: number;
}): CloudflareQueueHandoff {
  const { queue, enqueueTimeoutMs = 2_000 } = options ?? {};
  if (typeof queue?.send !== 'function') {
    throw new TypeError(
      'createCloudflareQueueHandoff: `queue` must be a Queues producer binding (env.WEBHOOKS).',
    );
  }
  return {
    enqueueTimeoutMs,
    maxBodyBytes: MAX_BODY_BYTES,
    async enqueue(job: HandoffJob): Promise<EnqueueResult> {
      const text = JSON.stringify(job);
      const bytes = encoder.encode(text).length;
      if (bytes > MAX_MESSAGE_BYTES) {
        // Only headers far beyond any real delivery's get here: the body is bounded above.
        throw new Error(
          `The hand-off job is ${bytes} bytes; a Cloudflare Queues message holds ${MAX_MESSAGE_BYTES}.`,
        );
      }
      await queue.send(job, { contentType: 'json' });
      return 'enqueued';
    },
  };
}
