import { createHmac } from 'node:crypto';

/** GitHub's documented `X-Hub-Signature-256` example (docs: "Validating webhook deliveries"). */
export const GITHUB = {
  secret: "It's a Secret to Everybody",
  payload: 'Hello, World!',
  signature: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
} as const;

/** The expected header, computed with node:crypto, never with the code under test. */
export function expectedSignature(body: Uint8Array | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Deterministic pseudo-random bytes (xorshift32), so a failing vector reproduces. */
export function pseudoRandomBytes(length: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
