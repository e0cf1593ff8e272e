/**
 * Reconcilers take turns through a `DedupStore` the app already has: a pass claims its window (so two
 * reconcilers never work one window at once) and each delivery it acts on (so it is resent once, by
 * one reconciler, whatever the windows that overlap it).
 */
import { boundDedupKey } from '../dedup/bound-key.js';
import type { DedupStore } from '../dedup/types.js';

/** Timers of the reconciler's clock. */
export interface Timers {
  set(callback: () => unknown, ms: number): unknown;
  clear(handle: unknown): void;
}

/** A claim of the store a pass holds: its window, or one delivery. */
export interface HeldKey {
  /** Keeps the key for `ttlMs`: later claims answer done. */
  complete(ttlMs: number): Promise<void>;
  /** Lets the key go: the next claim gets it. */
  release(): Promise<void>;
}

export type KeyClaim = { status: 'claimed'; held: HeldKey } | { status: 'busy' } | { status: 'done' };

const keyOf = (service: string, what: string): string =>
  boundDedupKey(service, `reconcile:${service}:${what}`);

/** The key of a pass's window: the service, the webhooks it covers, and the span. */
export const windowKey = (service: string, scope: string, from: number, to: number): string =>
  keyOf(service, `window:${scope}:${from}:${to}`);

/** The key that marks a delivery a reconciler acted on (resent it, or reported it lost). */
export const deliveryKey = (service: string, deliveryId: string): string =>
  keyOf(service, `delivery:${deliveryId}`);

/**
 * Claims `key` for `leaseMs`. With `timers` and a store that extends, the lease is renewed every third
 * of it until the claim is completed or released, so a pass slowed by rate limits keeps its window.
 */
export async function claimKey(
  store: DedupStore,
  key: string,
  leaseMs: number,
  timers?: Timers,
): Promise<KeyClaim> {
  const answer = await store.claim(key, { leaseMs });
  if (answer.status === 'completed') return { status: 'done' };
  if (answer.status === 'in_progress') return { status: 'busy' };
  const { token } = answer;
  let timer: unknown;
  let stopped = false;
  // A renewal that fails to reach the store is tried again at the next turn; one fenced off ends them.
  const renew = (): void => {
    timer = timers?.set(
      async () => {
        if (!stopped && (await store.extend!(key, token, { leaseMs }).catch(() => true))) renew();
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
  };
  if (store.extend && timers) renew();
  const stop = (): void => {
    stopped = true;
    if (timer !== undefined) timers?.clear(timer);
    timer = undefined;
  };
  return {
    status: 'claimed',
    held: {
      async complete(ttlMs) {
        stop();
        await store.complete(key, token, { ttlMs });
      },
      async release() {
        stop();
        await store.release(key, token);
      },
    },
  };
}
