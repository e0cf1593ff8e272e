/**
 * @module
 * Hand-off mode on NATS JetStream: `createNatsHandoff` for the receiver's `handoff` option (publish
 * with `Nats-Msg-Id` = the dedup key), `createNatsWorker` (a durable pull consumer) to run the
 * handlers, `ensureNatsStreams` to create the streams, and the dead-letter functions. Takes your JetStream client of `@nats-io/jetstream` 3
 * (optional peer). See docs/handoff.md.
 */

export type { EnsuredResource } from '../ensure.js';
export {
  listNatsDeadLetters,
  type NatsDeadLetter,
  type NatsDeadLetterOptions,
  redriveNatsDeadLetters,
} from './dead-letters.js';
export { createNatsHandoff, type NatsHandoff, type NatsHandoffOptions } from './handoff.js';
export { ensureNatsStreams, type NatsStreamsOptions } from './setup.js';
export { createNatsWorker, type NatsWorker, type NatsWorkerOptions } from './worker.js';
