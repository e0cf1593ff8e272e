/**
 * Fencing tokens: unique per claim, so a stale attempt's write never passes for the current owner's.
 * A process-wide counter makes them unique within a process; a random prefix drawn once per process
 * (80 bits) keeps two processes writing to one store apart. Drawn on first use, never when a module
 * loads: some runtimes (Cloudflare Workers) refuse random values outside a request.
 *
 * The token is not a secret: whoever can call the store can write any record anyway. Nothing random
 * per claim, so a claim costs one small number's `toString` (docs/benchmarks.md).
 */

let prefix: string | undefined;
let counter = 0;

function drawPrefix(): string {
  const words = globalThis.crypto.getRandomValues(new Uint32Array(3));
  // 32 + 32 + 16 bits, base 36, fixed width: 7 + 7 + 4 characters.
  return `${words[0]!.toString(36).padStart(7, '0')}${words[1]!.toString(36).padStart(7, '0')}${(words[2]! & 0xffff).toString(36).padStart(4, '0')}.`;
}

/** A new fencing token such as `1x9a0qz0b2m7pe4kq1.k3f`; never reused within a process. */
export function createToken(): string {
  prefix ??= drawPrefix();
  // A comparison, not `% Number.MAX_SAFE_INTEGER`: a remainder by a non-small integer is a libm call.
  counter = counter >= Number.MAX_SAFE_INTEGER - 1 ? 0 : counter + 1;
  return prefix + counter.toString(36);
}
