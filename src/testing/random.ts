/** A source of randomness: `next()` in [0, 1). Seeded ones make ids, secrets and fixtures repeatable. */
export interface Random {
  next(): number;
  /** `length` random bytes. */
  bytes(length: number): Uint8Array;
}

/**
 * A deterministic source for a numeric or string seed (mulberry32), or the platform's
 * `crypto.getRandomValues` when `seed` is undefined.
 */
export function createRandom(seed?: number | string): Random {
  if (seed === undefined) {
    return {
      next: () => crypto.getRandomValues(new Uint32Array(1))[0]! / 2 ** 32,
      bytes: (length) => crypto.getRandomValues(new Uint8Array(length)),
    };
  }
  let state = typeof seed === 'number' ? seed >>> 0 : hashSeed(seed);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    next,
    bytes(length) {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i++) out[i] = (next() * 256) | 0;
      return out;
    },
  };
}

function hashSeed(seed: string): number {
  let hash = 2166136261;
  for (let i = 0; i < seed.length; i++) hash = Math.imul(hash ^ seed.charCodeAt(i), 16777619);
  return hash >>> 0;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

/** A version 4 UUID drawn from `random`. */
export function randomUuid(random: Random): string {
  const b = random.bytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `prefix` followed by `byteLength` random bytes in hex. */
export function randomToken(random: Random, prefix: string, byteLength: number): string {
  return prefix + hex(random.bytes(byteLength));
}

/** A random integer in [min, max]. */
export function randomInt(random: Random, min: number, max: number): number {
  return min + Math.floor(random.next() * (max - min + 1));
}

/** One element of a non-empty list. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random.next() * items.length)]!;
}
