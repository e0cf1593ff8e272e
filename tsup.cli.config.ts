import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/**
 * The `svc-webhooks` command (package.json#bin): one Node ESM file, built after the library
 * (`npm run build` runs tsup.config.ts first, which cleans dist/). Not an export of the package.
 * It bundles the library code it uses; its runtime dependencies are commander and zod.
 */
export default defineConfig({
  entry: { cli: 'src/cli/index.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  dts: false,
  splitting: false,
  sourcemap: false,
  clean: false,
  outDir: 'dist',
  banner: { js: '#!/usr/bin/env node' },
  define: { __CLI_VERSION__: JSON.stringify(version) },
  // Keep `node:` specifiers as written (the CI's dependency check tells builtins by the prefix).
  removeNodeProtocol: false,
  external: [/^node:/, 'zod', 'commander'],
});
