import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

/**
 * Subpath -> source entry; `package.json#exports` and `#typesVersions` mirror it (written by
 * scripts/sync-exports.mjs, checked by test/package/exports.test.ts).
 */
const subpaths: Record<string, string> = JSON.parse(
  readFileSync(new URL('./entries.json', import.meta.url), 'utf8'),
);

// A missing entry would otherwise surface as a confusing esbuild error, or worse, as a subpath that
// `exports` promises but the tarball lacks. Fail before building, naming every missing file.
const missing = Object.entries(subpaths).filter(
  ([, file]) => !existsSync(new URL(`./${file}`, import.meta.url)),
);
if (missing.length > 0) {
  throw new Error(
    `tsup.config.ts: entries.json lists source files that do not exist:\n${missing
      .map(([subpath, file]) => `  "${subpath}" -> ${file}`)
      .join('\n')}\nCreate them or remove the subpath from entries.json (and package.json#exports).`,
  );
}

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

// dist stays flat (`testing/msw` -> dist/testing-msw.js): every entry and chunk sits beside the
// others, so the chunks' relative imports and the build-output graph checks need no path logic.
const entry = Object.fromEntries(
  Object.entries(subpaths).map(([subpath, file]) => [
    subpath === '.' ? 'index' : subpath.replaceAll('/', '-'),
    file,
  ]),
);

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  // tsup 8 (the line that accepts Node 20) passes `baseUrl` to its declaration build, which
  // TypeScript 6 flags as deprecated; nothing of ours sets it.
  dts: { compilerOptions: { ignoreDeprecations: '6.0' } },
  // One shared chunk per format, so `WebhookError` (and the memory store) exist once whatever
  // combination of subpaths an app imports.
  splitting: true,
  // tsup's rollup pass. An app's bundler is still what drops unused code (module-level schemas are
  // built in `/* @__PURE__ */ define(…)` calls, src/shared/define.ts, so that an import needing no
  // schema carries no zod: test/package/bundle-size.test.ts), and the pass changed no app bundle by
  // more than 130 bytes when measured. It is on for the CommonJS build: without it tsup turns split
  // ESM chunks into CommonJS with sucrase, which rewrites every `?.` and `??` into helper calls and
  // prepends the helpers to each of 37 `.cjs` files (24 kB unpacked; 7.7 kB of the packed tarball).
  treeshake: true,
  // No source maps: maps without `sourcesContent` point at src/, which is not shipped, and with it
  // they more than double the tarball (docs/architecture.md, "The package as published"). The code
  // is not minified, so a stack trace already names a readable line of dist/.
  sourcemap: false,
  // The `svc-webhooks` command (package.json#bin) is one more entry of the ESM build only, not an
  // export: it shares the library's chunks instead of carrying its own copy of the emitters,
  // management clients and verifiers (docs/architecture.md, "The package as published"). Its
  // `#!/usr/bin/env node` line is the first line of src/cli/index.ts, which esbuild keeps.
  esbuildOptions(options, { format }) {
    // The SQLite loader resolves better-sqlite3 from the package's own location (src/dedup/
    // sqlite-driver.ts): in CommonJS that is the file's `__filename`, which `createRequire` takes too.
    if (format === 'cjs') options.define = { ...options.define, 'import.meta.url': '__filename' };
    if (format !== 'esm') return;
    const entries = options.entryPoints as Record<string, string>;
    options.entryPoints = { ...entries, cli: fileURLToPath(new URL('./src/cli/index.ts', import.meta.url)) };
  },
  define: { __CLI_VERSION__: JSON.stringify(version) },
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  outDir: 'dist',
  // Keep `node:crypto` as written: a bare `crypto` reads as an npm package to bundlers and to the
  // dependency checks over the build (test/package/build-output.test.ts, .ci/run).
  removeNodeProtocol: false,
  external: [
    /^node:/,
    'zod',
    'ioredis',
    'redis',
    'pg',
    'express',
    'fastify',
    'next',
    'msw',
    'bullmq',
    'pg-boss',
    'commander',
    '@opentelemetry/api',
  ],
});
