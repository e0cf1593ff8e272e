/**
 * The claim port: what running a delivery needs of whoever says that it alone runs a dedup key now.
 * `Claims.claim(key)` answers with a {@link Held} claim, or why there is none (a duplicate, busy
 * elsewhere, a failed store); a `Held` is then extended while the handlers run and completed or
 * released once they settled. Every write answers with a {@link Settled}: none throws or rejects.
 *
 * Whether the answers are values or promises is fixed per `Claims` (`sync`), so the delivery decides
 * it once: the memory store's claims answer at once (memory-claims.ts); claims over any other
 * {@link DedupStore} answer later, each call bounded (store-claims.ts); a database inbox row is a
 * `Held` of its own (token: the row's fence; complete: its status update).
 *
 * The port lives on the store floor, not in core/delivery/ beside its one reader: the stores build
 * it, and a floor imports only floors below it (docs/architecture.md).
 */

/**
 * How a write through a held claim ended: recorded (`true`); fenced off (`false`: the lease had ended
 * and the key may be another attempt's); or the error of a call that failed.
 */
export type Settled = boolean | { readonly error: unknown };

/** What a receiver's claims are made with, fixed per receiver. */
export interface ClaimTerms {
  /** How long a claim holds before another attempt may take it over, in ms. */
  readonly leaseMs: number;
  /** How long a completed record is kept (duplicates recognised), in ms. */
  readonly ttlMs: number;
  /** The one bound of every store call (`storeTimeoutMs`, passed as `callTimeoutMs`). */
  readonly callTimeoutMs: number;
}

interface HeldClaim<Answer> {
  /** The fencing token: every write of this claim carries it. */
  readonly token: string;
  /** When the lease ends unless extended (epoch ms). */
  readonly leaseEndsAt: number;
  /** Extends the lease to `leaseMs` from now; absent where a lease cannot be extended. */
  extend?(): Answer;
  /** Marks the key done: the next copy is a duplicate. */
  complete(): Answer;
  /** Drops the claim: the next attempt runs the delivery again. */
  release(): Answer;
}

/** A held claim whose writes answer at once (the memory store's). */
export interface SyncHeld extends HeldClaim<Settled> {
  readonly sync: true;
}

/** A held claim whose writes answer later (any store over the network, a database inbox row). */
export interface AsyncHeld extends HeldClaim<Promise<Settled>> {
  readonly sync: false;
}

/** A claim a delivery holds until it completes or releases it. */
export type Held = SyncHeld | AsyncHeld;

/**
 * The answer to a claim: the held claim itself (`claimed`); `duplicate` (the key was completed);
 * `busy` (another attempt holds it until `leaseEndsAt`, for a Retry-After); `failed` (no answer: no
 * handler may run, fail closed).
 */
export type ClaimAnswer<H extends Held = Held> =
  | (H & { readonly status: 'claimed' })
  | { readonly status: 'duplicate' }
  | { readonly status: 'busy'; readonly leaseEndsAt: number }
  | { readonly status: 'failed'; readonly error: unknown };

/**
 * The delivery's deadline as a claim sees it: the last bound of a store that ignores
 * `callTimeoutMs` (core/deadline.ts's `Deadline` is one).
 */
export interface ClaimDeadline {
  /** Epoch ms. */
  readonly at: number;
  /** `work`'s value, or a symbol once the deadline passed first; `work` goes on either way. */
  race<T>(work: Promise<T>): Promise<T | symbol>;
}

/** Claims that answer at once: nothing to wait for, nothing to bound. */
export interface SyncClaims {
  readonly sync: true;
  claim(key: string): ClaimAnswer<SyncHeld>;
}

/** Claims that answer later, each claim bounded by the store's bound and the delivery's deadline. */
export interface AsyncClaims {
  readonly sync: false;
  /** Never rejects. */
  claim(key: string, deadline: ClaimDeadline): Promise<ClaimAnswer<AsyncHeld>>;
}

/** A receiver's claims: synchronous or not, fixed for the receiver's life. */
export type Claims = SyncClaims | AsyncClaims;

// Shared and frozen: a duplicate is the commonest answer and carries nothing of its own.
export const DUPLICATE: ClaimAnswer<never> = Object.freeze({ status: 'duplicate' });
