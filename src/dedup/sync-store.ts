/**
 * @module
 * Internal: a dedup store whose operations finish synchronously (the memory store) also exposes them
 * under {@link syncStoreOps}, so the receiver's hot path runs claim → handlers → complete without a
 * promise hop or a timeout timer (a synchronous store cannot hang). Not part of the public API: other
 * stores, and anything wrapping a memory store, take the ordinary `DedupStore` path.
 */
import type { ClaimResult, DedupStore } from './types.js';

/** The synchronous operations; same semantics and argument checks as the `DedupStore` methods. */
export interface SyncStoreOps {
  claim(key: string, leaseMs: number, token?: string): ClaimResult;
  complete(key: string, token: string, ttlMs: number): boolean;
  release(key: string, token: string): boolean;
}

/** The property a synchronous store keeps its {@link SyncStoreOps} under (non-enumerable). */
export const syncStoreOps: unique symbol = Symbol('svc.webhooks.syncStoreOps');

/** Attaches `ops` to `store` under {@link syncStoreOps} and returns `store`. */
export function withSyncOps<S extends DedupStore>(store: S, ops: SyncStoreOps): S {
  Object.defineProperty(store, syncStoreOps, { value: ops, enumerable: false });
  return store;
}

/** The synchronous operations of `store`, if it has them. */
export function syncOpsOf(store: DedupStore): SyncStoreOps | undefined {
  return (store as { [syncStoreOps]?: SyncStoreOps })[syncStoreOps];
}
