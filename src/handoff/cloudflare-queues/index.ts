/**
 * @module
 * Hand-off mode on Cloudflare Queues: `createCloudflareQueueHandoff` for the receiver's `handoff`
 * option in a Worker's `fetch()`, `createCloudflareQueueConsumer` for its `queue()` handler. Takes
 * your producer bindings; no Node API. See docs/handoff-cloudflare-queues.md.
 */
export { type CloudflareQueueConsumerOptions, createCloudflareQueueConsumer } from './consumer.js';
export type { CloudflareQueueHandoff } from './handoff.js';
export { createCloudflareQueueHandoff } from './handoff.js';
export type { MessageBatchLike, MessageLike, QueueLike } from './queue-like.js';
