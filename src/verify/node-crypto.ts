import type * as NodeCrypto from 'node:crypto';

let cached: typeof NodeCrypto | null | undefined;

/**
 * `node:crypto` where the runtime has it (Node, Bun, Deno), else `null` (edge runtimes, Workers
 * without the Node compatibility flag, browsers). Looked up through `process.getBuiltinModule`, so no
 * bundler ever sees an import of it and the same build runs everywhere.
 */
export function getNodeCrypto(): typeof NodeCrypto | null {
  if (cached !== undefined) return cached;
  try {
    // Vercel/Next edge runtimes (and their emulation in tests) may expose a Node-like `process`; code
    // there is promised Web APIs only, so the Web Crypto path is taken.
    if (typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string') {
      cached = null;
      return cached;
    }
    const getBuiltin = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
      ?.getBuiltinModule;
    const mod =
      typeof getBuiltin === 'function' ? (getBuiltin('node:crypto') as typeof NodeCrypto) : undefined;
    cached =
      mod && typeof mod.createHmac === 'function' && typeof mod.timingSafeEqual === 'function' ? mod : null;
  } catch {
    cached = null;
  }
  return cached;
}

/** For tests: forget the lookup so the next call repeats it. */
export function resetNodeCryptoCache(): void {
  cached = undefined;
}
