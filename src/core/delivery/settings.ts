/**
 * The settings every delivery of one receiver runs with, built once per receiver: the claims of its
 * store (dedup/store-claims.ts) with the store's one bound, its clock, log and `onError` hooks, and its
 * one scheduler (direct mode and the hand-off worker's jobs share it).
 */
import { claimsOf } from '../../dedup/store-claims.js';

import type { DispatchableEvent } from '../handler-registry.js';
import type { ErrorHook } from '../handler-types.js';
import type { PipelineOptions } from '../pipeline-options.js';
import { createScheduler } from '../request-timers.js';
import type { DeliverySettings } from './run.js';

/** The delivery settings of a receiver with `options` and `hooks` (its registry's `onError` hooks). */
export function deliverySettings(
  options: PipelineOptions,
  hooks: readonly ErrorHook<DispatchableEvent>[],
): DeliverySettings {
  const { dedup, leaseMs, ttlMs, storeTimeoutMs, clock, logger } = options;
  const terms = { leaseMs, ttlMs, callTimeoutMs: storeTimeoutMs };
  return {
    ...terms,
    claims: claimsOf(dedup, terms),
    clock,
    logger,
    hooks,
    scheduler: createScheduler(clock),
  };
}
