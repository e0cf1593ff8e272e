import { getNodeCrypto } from './node-crypto.js';

/**
 * Constant-time equality of two byte strings of equal length: `crypto.timingSafeEqual` on Node, an
 * XOR-accumulate loop elsewhere. Unequal lengths return `false` at once; callers only compare values
 * whose length is public (the signature header's format fixes it).
 *
 * @example
 * ```ts
 * import { timingSafeEqual } from '@svc/webhooks/verify';
 *
 * const encoder = new TextEncoder();
 * const same = timingSafeEqual(encoder.encode(received), encoder.encode(expected));
 * ```
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  const node = getNodeCrypto();
  if (node) return node.timingSafeEqual(a, b);
  return xorEqual(a, b);
}

/** The Web Crypto runtimes' comparison: no early exit, one pass over every byte. */
export function xorEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
