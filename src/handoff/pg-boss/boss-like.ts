/**
 * The part of a pg-boss `PgBoss` instance this subpath calls, typed structurally so our declarations
 * do not depend on pg-boss's (an ESM-only package) and any pg-boss 12 instance fits.
 */

/**
 * A pg-boss job as `work()` hands it over (the fields we read).
 *
 * @example
 * ```ts
 * import type { PgBossJobLike } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossJobLike): PgBossJobLike {
 *   return value;
 * }
 * ```
 */
export interface PgBossJobLike {
  id: string;
  name: string;
  data: unknown;
  /** Retries so far: 0 on the first attempt. */
  retryCount: number;
  /** Retries allowed (present when fetched with `includeMetadata`). */
  retryLimit?: number;
  /** Aborted by pg-boss when the job expires or the instance stops. */
  signal?: AbortSignal;
}

/**
 * A stored job as `findJobs()` / `getJobById()` return it (the fields we read).
 *
 * @example
 * ```ts
 * import type { PgBossStoredJobLike } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossStoredJobLike): PgBossStoredJobLike {
 *   return value;
 * }
 * ```
 */
export interface PgBossStoredJobLike {
  id: string;
  name: string;
  data: unknown;
  state: string;
  retryCount: number;
  output?: unknown;
  createdOn: Date;
  completedOn?: Date | null;
  sourceName?: string | null;
  sourceId?: string | null;
  sourceRetryCount?: number | null;
}

/**
 * Queue settings we create the queues with (pg-boss's own option names, seconds).
 *
 * @example
 * ```ts
 * import type { PgBossQueueSettings } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossQueueSettings): PgBossQueueSettings {
 *   return value;
 * }
 * ```
 */
export interface PgBossQueueSettings {
  deadLetter?: string;
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  retryDelayMax?: number;
  expireInSeconds?: number;
}

/**
 * A per-job outcome of a `perJobResults` handler.
 *
 * @example
 * ```ts
 * import type { PgBossJobResult } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossJobResult): PgBossJobResult {
 *   return value;
 * }
 * ```
 */
export interface PgBossJobResult {
  id: string;
  status: 'completed' | 'failed' | 'deadletter';
  output?: object;
}

/**
 * The methods of pg-boss 12's `PgBoss` that the hand-off calls. Pass your own started instance.
 *
 * @example
 * ```ts
 * import type { PgBossLike } from '@svc/webhooks/pg-boss';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: PgBossLike): PgBossLike {
 *   return value;
 * }
 * ```
 */
export interface PgBossLike {
  send(name: string, data?: object | null, options?: { id?: string }): Promise<string | null>;
  createQueue(name: string, options?: PgBossQueueSettings): Promise<void>;
  updateQueue(name: string, options?: PgBossQueueSettings): Promise<void>;
  work(
    name: string,
    options: {
      batchSize: number;
      perJobResults: true;
      includeMetadata: true;
      burstWhenBatchFull?: boolean;
      pollingIntervalSeconds?: number;
    },
    handler: (jobs: PgBossJobLike[]) => Promise<PgBossJobResult[]>,
  ): Promise<string>;
  /** Wakes a worker so it fetches now instead of after its poll delay. */
  notifyWorker(workerId: string): void;
  offWork(name: string, options?: { id?: string; wait?: boolean }): Promise<void>;
  findJobs(
    name: string,
    options?: { id?: string; queued?: boolean; limit?: number; after?: string },
  ): Promise<PgBossStoredJobLike[]>;
  redrive(name: string, options?: { ids?: string[]; limit?: number }): Promise<number>;
  /** Stops the instance (our workers call it only on a shutdown signal). */
  stop(options?: { graceful?: boolean; close?: boolean; timeout?: number }): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  listenerCount(event: 'error'): number;
}
