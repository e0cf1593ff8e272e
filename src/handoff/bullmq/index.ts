/**
 * @module
 * `@svc/webhooks/bullmq`: the durable hand-off on BullMQ (Redis). A receiver with
 * `handoff: createBullmqHandoff({ queue })` acknowledges a delivery once Redis stored its job; worker
 * processes run the same handlers with `createBullmqWorker(receiver, …)`. See docs/handoff.md.
 */
export type { BullmqAddOptions, BullmqJobLike, BullmqQueueLike } from './bullmq-like.js';
export {
  type BullmqDeadLetter,
  listBullmqDeadLetters,
  redriveBullmqDeadLetter,
  redriveBullmqDeadLetters,
} from './dead-letters.js';
export {
  type BullmqHandoffOptions,
  createBullmqHandoff,
  DEFAULT_BULLMQ_ATTEMPTS,
  DEFAULT_BULLMQ_BACKOFF_MS,
} from './handoff.js';
export { bullmqJobId, dedupKeyOfJobId } from './job-id.js';
export { type BullmqHandoffWorker, createBullmqWorker } from './worker.js';
export { type BullmqWorkerOptions, DEFAULT_SHUTDOWN_TIMEOUT_MS } from './worker-options.js';
