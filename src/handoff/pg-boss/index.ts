/**
 * @module
 * Hand-off mode on pg-boss (PostgreSQL): `createPgBossHandoff` for the receiver's `handoff` option,
 * `createPgBossWorker` to run the handlers in worker processes, and the dead-letter functions. Takes
 * your own pg-boss 12 `PgBoss` instance (optional peer; Node ≥ 22.12 as pg-boss requires).
 * See docs/handoff-pg-boss.md.
 */

export type {
  PgBossJobLike,
  PgBossJobResult,
  PgBossLike,
  PgBossQueueSettings,
  PgBossStoredJobLike,
} from './boss-like.js';
export {
  listPgBossDeadLetters,
  type PgBossDeadLetter,
  type PgBossDeadLetterOptions,
  redrivePgBossDeadLetters,
} from './dead-letters.js';
export { createPgBossHandoff, type PgBossHandoff, type PgBossHandoffOptions } from './handoff.js';
export type { PgBossQueueOptions, PgBossRetryPolicy } from './queues.js';
export { createPgBossWorker, type PgBossWorker } from './worker.js';
export type { PgBossWorkerOptions } from './worker-options.js';
