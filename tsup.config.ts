import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

/** Subpath -> source entry; `package.json#exports` mirrors it (checked by test/package/exports.test.ts). */
const subpaths: Record<string, string> = JSON.parse(readFileSync(new URL('./entries.json', import.meta.url), 'utf8'));

const entry = Object.fromEntries(
  Object.entries(subpaths).map(([subpath, file]) => [subpath === '.' ? 'index' : subpath, file]),
);

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  dts: true,
  // One shared chunk per format, so `WebhookError` (and the memory store) exist once whatever
  // combination of subpaths an app imports.
  splitting: true,
  treeshake: false,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  outDir: 'dist',
  external: [/^node:/, 'zod', 'ioredis', 'redis', 'pg', 'express', 'fastify', 'next', 'msw'],
});
