/**
 * @module
 * `@svc/webhooks/bullmq`: the durable hand-off on BullMQ (Redis). A receiver with
 * `handoff: createBullmqHandoff({ queue })` acknowledges a delivery once Redis stored its job; worker
 * processes run the same handlers with `createBullmqWorker(receiver, …)`. See docs/handoff-bullmq.md.
 */

export type { BullmqAddOptions, BullmqQueueLike } from './bullmq-like.js';
export {
  type BullmqDeadLetter,
  listBullmqDeadLetters,
  redriveBullmqDeadLetter,
  redriveBullmqDeadLetters,
} from './dead-letters.js';
export { type BullmqHandoffOptions, createBullmqHandoff } from './handoff.js';
export { type BullmqHandoffWorker, createBullmqWorker } from './worker.js';
export type { BullmqWorkerOptions } from './worker-options.js';
