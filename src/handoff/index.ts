/**
 * @module
 * `@svc/webhooks/handoff`: the hand-off contract for queue engines of your own. The job a receiver
 * writes (`HandoffJob`), the target it writes it to (`HandoffTarget`, `EnqueueResult`), what a worker
 * calls (`HandoffRunner`, `RunJobOptions`), and the one translation of a worker's verdict into what the
 * engine does with the job (`jobAction`). The shipped engines (`./bullmq`, `./pg-boss`,
 * `./cloudflare-queues`) are built on it.
 */

export type { AcceptedVerdict } from '../core/verdict.js';
export type { EnqueueResult, HandoffJob, HandoffRunner, HandoffTarget, RunJobOptions } from './job/types.js';
export { HANDOFF_JOB_VERSION } from './job/types.js';
export { type JobAction, type JobActionOptions, jobAction, jobError } from './job-action.js';
