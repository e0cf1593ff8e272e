import type { DedupStore } from '../../dedup/types.js';
import type { VirtualClock } from '../clock/virtual-clock.js';

/** The lease and ttl the checks use (the mail service's recommended lease, the CRM's ttl). */
export const LEASE = 30_000;
export const TTL = 86_400_000;

/** An optional method of {@link DedupStore} whose checks a store can be left out of. */
export type OptionalMethod = 'abandon' | 'extend' | 'prune';

/** One check: `run` gets a fresh store and its clock, and throws on the first difference. */
export interface Check {
  name: string;
  /** The optional method the check is about; left out when the store declares it does not have it. */
  needs?: OptionalMethod;
  run(context: { store: DedupStore; clock: VirtualClock }): Promise<void>;
}
