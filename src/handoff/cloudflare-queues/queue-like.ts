/**
 * The parts of the Workers runtime's Queues API this entry uses (`Queue`, `Message`, `MessageBatch`
 * of `@cloudflare/workers-types`), so neither the types package nor the runtime is imported.
 */

/**
 * A queue producer binding (`env.WEBHOOKS`: a `Queue`).
 *
 * @example
 * ```ts
 * import type { QueueLike } from '@svc/webhooks/cloudflare-queues';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: QueueLike): QueueLike {
 *   return value;
 * }
 * ```
 */
export type QueueLike = {
  send(
    body: unknown,
    options?: { contentType?: 'json' | 'text' | 'bytes' | 'v8'; delaySeconds?: number },
  ): Promise<unknown>;
};

/**
 * One message handed to a Worker's `queue()` handler.
 *
 * @example
 * ```ts
 * import type { MessageLike } from '@svc/webhooks/cloudflare-queues';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: MessageLike): MessageLike {
 *   return value;
 * }
 * ```
 */
export type MessageLike = {
  readonly id: string;
  readonly body: unknown;
  /** How many times it was delivered, this one included (1 for the first). */
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
};

/**
 * What a Worker's `queue(batch, env, ctx)` handler receives.
 *
 * @example
 * ```ts
 * import type { MessageBatchLike } from '@svc/webhooks/cloudflare-queues';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: MessageBatchLike): MessageBatchLike {
 *   return value;
 * }
 * ```
 */
export type MessageBatchLike = {
  readonly queue: string;
  readonly messages: readonly MessageLike[];
};
