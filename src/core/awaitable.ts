/**
 * The one contract of the steps that may wait (the verifier, the dedup store, the handlers): a value
 * when the work finished at once (node:crypto, the receiver's own memory store, synchronous handlers),
 * a promise when it had to wait. Each step checks `instanceof Promise` once and goes on, so a delivery
 * that never waits is answered without a promise hop (docs/benchmarks.md measures what that is worth
 * against a plain `async` path).
 */

/** A value, or a promise of it. */
export type Awaitable<T> = T | Promise<T>;
