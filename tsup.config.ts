import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
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

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
  imports: Record<string, unknown>;
};
const { version } = pkg;

// dist stays flat (`testing/msw` -> dist/testing-msw.js): every entry and chunk sits beside the
// others, so the chunks' relative imports and the build-output graph checks need no path logic.
const entry = Object.fromEntries(
  Object.entries(subpaths).map(([subpath, file]) => [
    subpath === '.' ? 'index' : subpath.replaceAll('/', '-'),
    file,
  ]),
);

// The parts of zod the receivers parse with (src/shared/zod-kit.ts) are imported as `#zod-kit`, which
// package.json#imports maps per runtime: Node gets zod-kit-node.* (those parts built in, one file, so
// an import from node_modules does not load all of zod's core, docs/benchmarks.md "Cold start"); a
// bundler (the `module` condition, or no `node` condition, as Wrangler's) gets zod-kit.*, which
// imports the app's own zod, so a bundle carries zod once. A build outside dist/ (the tests' builds
// under node_modules/.cache) gets a package.json of its own with the same map, so it runs in place.
const DIST = fileURLToPath(new URL('./dist', import.meta.url));
const ZOD_KIT = fileURLToPath(new URL('./src/shared/zod-kit.ts', import.meta.url));
// tsup builds `cjs` with splitting as esbuild `esm` output it converts afterwards: the format a build
// stands for, recorded by `esbuildOptions` below.
const tsupFormat = new WeakMap<object, string>();
const zodKit: Plugin = {
  name: 'zod-kit',
  setup(pluginBuild) {
    // bench/cold-start.mts builds older sources, which have no kit, with this config.
    if (!existsSync(ZOD_KIT)) return;
    pluginBuild.onResolve({ filter: /\/zod-kit\.js$/ }, (args) =>
      join(args.resolveDir, args.path).replace(/\.js$/, '.ts') === ZOD_KIT
        ? { path: '#zod-kit', external: true }
        : undefined,
    );
    pluginBuild.onEnd(async (result) => {
      const { outdir } = pluginBuild.initialOptions;
      const format = tsupFormat.get(pluginBuild.initialOptions);
      if (result.errors.length > 0 || outdir === undefined || (format !== 'esm' && format !== 'cjs')) return;
      const ext = format === 'esm' ? 'js' : 'cjs';
      const kit = (file: string, external: string[]) =>
        build({
          entryPoints: [ZOD_KIT],
          outfile: join(outdir, `${file}.${ext}`),
          bundle: true,
          format,
          platform: 'node',
          target: 'es2022',
          external,
          logLevel: 'warning',
        });
      await Promise.all([kit('zod-kit', ['zod', 'zod/*']), kit('zod-kit-node', [])]);
      if (resolve(outdir) === DIST) return;
      const imports = JSON.parse(JSON.stringify(pkg.imports).replaceAll('"./dist/', '"./'));
      const scope = { type: 'module', sideEffects: false, imports };
      writeFileSync(join(outdir, 'package.json'), `${JSON.stringify(scope, null, 2)}\n`);
    });
  },
};

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  // tsup 8 (the line that accepts Node 20) passes `baseUrl` to its declaration build, which
  // TypeScript 6 flags as deprecated; nothing of ours sets it.
  dts: { compilerOptions: { ignoreDeprecations: '6.0' } },
  // One shared chunk per format, so `WebhookError` (and the memory store) exist once whatever
  // combination of subpaths an app imports.
  splitting: true,
  // An app's bundler is what drops unused code: module-level schemas are built in
  // `/* @__PURE__ */ define(…)` calls (src/shared/define.ts) so that an import needing no schema
  // carries no zod (test/package/bundle-size.test.ts). tsup's own rollup pass changed no app bundle
  // by more than 130 bytes when measured, so it stays off.
  treeshake: false,
  // No source maps: maps without `sourcesContent` point at src/, which is not shipped, and with it
  // they more than double the tarball (docs/architecture.md, "The package as published"). The code
  // is not minified, so a stack trace already names a readable line of dist/.
  sourcemap: false,
  // The `svc-webhooks` command (package.json#bin) is one more entry of the ESM build only, not an
  // export: it shares the library's chunks instead of carrying its own copy of the emitters,
  // management clients and verifiers (docs/architecture.md, "The package as published"). Its
  // `#!/usr/bin/env node` line is the first line of src/cli/index.ts, which esbuild keeps.
  esbuildOptions(options, { format }) {
    tsupFormat.set(options, format);
    if (format !== 'esm') return;
    const entries = options.entryPoints as Record<string, string>;
    options.entryPoints = { ...entries, cli: fileURLToPath(new URL('./src/cli/index.ts', import.meta.url)) };
  },
  esbuildPlugins: [zodKit],
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
