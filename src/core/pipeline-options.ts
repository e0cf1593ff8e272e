/**
 * What the pipeline reads of a receiver's resolved options (the receiver floor resolves and checks
 * them, receiver/receiver-options.ts): limits, the store and its one bound, the clock, the log.
 */
import type { DedupStore } from '../dedup/types.js';
import type { Clock } from '../shared/clock.js';
import type { CapturedDelivery } from './capture.js';
import type { LogSink } from './logger.js';
import type { RouteSecrets } from './route-secrets.js';
import type { Telemetry } from './telemetry.js';

/** The options the pipeline runs with, resolved and checked. */
export interface PipelineOptions {
  /** Empty with a `secret` function. */
  readonly secrets: readonly string[];
  /** Option `handoffSecret`: the keys of hand-off jobs' MACs, the first signs; empty without it. */
  readonly handoffSecrets: readonly string[];
  /** The lookup of a `secret` function; undefined for fixed secrets. */
  readonly routeSecrets: RouteSecrets | undefined;
  readonly dedup: DedupStore;
  readonly leaseMs: number;
  readonly ttlMs: number;
  readonly timeoutMs: number;
  /** The bound of every dedup store call and of a hand-off enqueue (option `storeTimeoutMs`). */
  readonly storeTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  /** Option `maxInFlight`: past this many requests awaiting their verdict, 503 `overloaded`; Infinity for none. */
  readonly maxInFlight: number;
  /** Undefined when silenced (`logger: false`). */
  readonly logger: LogSink | undefined;
  readonly telemetry: Telemetry | undefined;
  readonly clock: Clock;
  readonly capture: ((delivery: CapturedDelivery) => void) | undefined;
}
