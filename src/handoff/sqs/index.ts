/**
 * @module
 * Hand-off mode on Amazon SQS (standard and FIFO queues): `createSqsHandoff` for the receiver's
 * `handoff` option, `createSqsWorker` (a long-poll worker) or `createSqsLambdaHandler` (an SQS event
 * source) to run the handlers, `ensureSqsQueues` to create the queues, and the dead-letter functions. Takes your `SQSClient` of
 * `@aws-sdk/client-sqs` v3 (optional peer). See docs/handoff-sqs.md.
 */

export type { EnsuredResource } from '../ensure.js';
export {
  listSqsDeadLetters,
  redriveSqsDeadLetters,
  type SqsDeadLetter,
  type SqsDeadLetterOptions,
} from './dead-letters.js';
export { ensureSqsQueues } from './ensure-sqs-queues.js';
export { createSqsHandoff, type SqsHandoff, type SqsHandoffOptions } from './handoff.js';
export { createSqsLambdaHandler, type SqsLambdaHandlerOptions, type SqsRecordLike } from './lambda.js';
export { orderingKey } from './message-ids.js';
export type { SqsQueuesOptions } from './setup.js';
export { createSqsWorker, type SqsWorker } from './worker.js';
export type { SqsWorkerOptions } from './worker-options.js';
