/**
 * Fencing tokens: unique per claim and unguessable enough that a stale worker cannot forge the
 * current owner's token. A process-wide counter makes them unique; 64 random bits make them
 * unpredictable. Random words are drawn in batches because `getRandomValues` per claim is slow.
 */

const BATCH = 512;
const words = new Uint32Array(BATCH);
let next = BATCH;
let counter = 0;

function randomWord(): string {
  if (next >= BATCH) {
    globalThis.crypto.getRandomValues(words);
    next = 0;
  }
  const word = words[next++] ?? 0;
  return word.toString(36).padStart(7, '0');
}

/** A new fencing token such as `k3f.1x9a0qz0b2m7pe`; never reused within a process. */
export function createToken(): string {
  // A comparison, not `% Number.MAX_SAFE_INTEGER`: a remainder by a non-small integer is a libm call.
  counter = counter >= Number.MAX_SAFE_INTEGER - 1 ? 0 : counter + 1;
  return `${counter.toString(36)}.${randomWord()}${randomWord()}`;
}
