import { answerFromRow, type ClaimRow } from './claim-row.js';
import { storeUnavailable } from './store-error.js';
import { createToken } from './token.js';
import type {
  AbandonOptions,
  ClaimOptions,
  ClaimResult,
  CompleteOptions,
  DedupStore,
  StoreCallOptions,
} from './types.js';
import { assertKey, assertMs, assertToken } from './validate.js';

/**
 * The store kit: the record logic every shipped store shares, written once (arguments checked, a
 * token drawn, a claim that lost read into an answer and asked again when the row changed in
 * between), over a backend's few primitives, each one statement, script or request of its own.
 * A backend's primitives get checked arguments and the call's options (its time bound); their
 * failures are the backend's to turn into `store_unavailable`.
 */

/**
 * One try at a claim: an answer (the backend decided it, e.g. a Redis script), the row that held the
 * key when the claim did not win (the kit answers from it), or `undefined` when the row changed in
 * between (the kit asks again).
 */
export type ClaimAttempt = ClaimResult | ClaimRow | undefined;

/** The primitives of one backend. Durations are checked whole positive milliseconds. */
export interface StoreBackend {
  /** `'SQLite'`, `'Postgres'`, …: names the store in `store_unavailable` messages. */
  name: string;
  claim(key: string, token: string, leaseMs: number, call: ClaimOptions): Promise<ClaimAttempt>;
  complete(key: string, token: string, ttlMs: number, call: CompleteOptions): Promise<boolean>;
  release(key: string, token: string, call: StoreCallOptions | undefined): Promise<boolean>;
  abandon(key: string, token: string, leaseMs: number, call: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, leaseMs: number, call: ClaimOptions): Promise<boolean>;
}

/** The five calls every shipped store has. */
export interface KitStore extends DedupStore {
  abandon(key: string, token: string, options: AbandonOptions): Promise<boolean>;
  extend(key: string, token: string, options: ClaimOptions): Promise<boolean>;
}

// A claim that keeps finding a row that changed under it (released or expired in between) is asked
// again this many times, then fails closed.
const CLAIM_ATTEMPTS = 5;

/** A {@link DedupStore} over `backend`: the shared skeleton of claim, complete, release, abandon, extend. */
export function storeFromBackend(backend: StoreBackend): KitStore {
  return {
    async claim(key: string, options: ClaimOptions): Promise<ClaimResult> {
      const { leaseMs, token = createToken() } = options;
      assertKey(key);
      assertMs('leaseMs', leaseMs);
      assertToken(token);
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const tried = await backend.claim(key, token, leaseMs, options);
        if (tried === undefined) continue;
        if ('status' in tried) return tried;
        const answer = answerFromRow(tried, token);
        if (answer) return answer;
      }
      throw storeUnavailable(
        backend.name,
        new Error(`claim did not settle after ${CLAIM_ATTEMPTS} attempts`),
      );
    },

    async complete(key: string, token: string, options: CompleteOptions): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      assertMs('ttlMs', options.ttlMs);
      return backend.complete(key, token, options.ttlMs, options);
    },

    async release(key: string, token: string, options?: StoreCallOptions): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      return backend.release(key, token, options);
    },

    async abandon(key: string, token: string, options: AbandonOptions): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      assertMs('leaseMs', options.leaseMs);
      return backend.abandon(key, token, options.leaseMs, options);
    },

    async extend(key: string, token: string, options: ClaimOptions): Promise<boolean> {
      assertKey(key);
      assertToken(token);
      assertMs('leaseMs', options.leaseMs);
      return backend.extend(key, token, options.leaseMs, options);
    },
  };
}

/**
 * Reports, once per store, that its table holds a row it cannot read (hand-edited, or written by an
 * older version): the store treats such a row as expired and replaces it, so its key stays usable.
 * Names the table, never the key (a key can carry text a sender chose).
 */
export function badRowWarning(store: string, table: string): () => void {
  let warned = false;
  return () => {
    if (warned) return;
    warned = true;
    console.warn(
      `@svc/webhooks: the ${store} dedup table ${table} holds a row this store cannot read (a NULL or a value of the wrong type); it is treated as expired and replaced. Further such rows are not reported.`,
    );
  };
}
