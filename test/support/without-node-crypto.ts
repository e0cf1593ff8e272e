/**
 * Runs scripts in a child node where node:crypto cannot be reached: the preload removes
 * `process.getBuiltinModule` and makes every import or require of `node:crypto` / `crypto` throw.
 * What is left is what Web-Crypto-only runtimes have: `globalThis.crypto.subtle`. The tests that
 * prove a BUILT entry works there share it.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PRELOAD = `
import { registerHooks } from 'node:module';
const blocked = new Set(['node:crypto', 'crypto']);
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (blocked.has(specifier)) throw new Error('blocked: ' + specifier);
    return nextResolve(specifier, context);
  },
});
delete process.getBuiltinModule;
`;

/** A folder holding the preload and `scripts` (file name → source). */
export interface NoNodeCryptoScripts {
  /** Runs `script` of the folder with `args` under the preload (30 s at most). */
  run(script: string, args: readonly string[]): SpawnSyncReturns<string>;
  /** Deletes the folder. */
  close(): void;
}

/** Writes the preload and `scripts` to a new temp folder named after `prefix`. */
export function withoutNodeCrypto(prefix: string, scripts: Record<string, string>): NoNodeCryptoScripts {
  const work = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(work, 'preload.mjs'), PRELOAD);
  for (const [name, source] of Object.entries(scripts)) writeFileSync(join(work, name), source);
  const preload = pathToFileURL(join(work, 'preload.mjs')).href;
  return {
    run: (script, args) =>
      spawnSync(process.execPath, ['--import', preload, join(work, script), ...args], {
        encoding: 'utf8',
        timeout: 30_000,
      }),
    close: () => rmSync(work, { recursive: true, force: true }),
  };
}
