/**
 * What one import costs an app: each case of CONSUMER_CASES (one line an app writes) bundled by
 * esbuild as an app bundler does (ESM, minified, tree-shaken), resolving the built package through
 * `package.json#exports` and zod from node_modules. The budgets that guard these numbers live in
 * test/package/bundle-size.test.ts.
 *
 *   npx tsx bench/bundle-size.mts            # writes its section of docs/benchmarks.md
 *   npx tsx bench/bundle-size.mts --dry-run  # prints only
 *   npx tsx bench/bundle-size.mts --by-module  # what a typical Worker carries, by source module
 *
 * `--by-module` bundles the Worker of docs/bundling.md (both receivers behind `createFetchHandler`)
 * from src/ as Wrangler bundles the package (esbuild, ESM, minified, Wrangler's conditions) and prints
 * each module's minified bytes (esbuild's metafile) and the gzip of the whole; built from the sources,
 * so every byte is named by the module it comes from rather than by a chunk of dist/.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import {
  bundleConsumer,
  CONSUMER_CASES,
  installConsumer,
  WRANGLER_BUILD,
  workerSource,
} from '../test/package/consumer-bundle.js';
import { buildDist } from '../test/package/dist.js';
import { writeBenchSection } from './docs-section.mjs';

// Minified bytes of each case before the package was made tree-shakable (tsup `treeshake: false`,
// zod schemas built at module top level), measured the same way at commit 22c64de.
const BEFORE: Record<string, number> = {
  isWebhookError: 105_368,
  'verifySignature (root)': 110_347,
  createMailReceiver: 137_888,
  createCrmReceiver: 137_044,
  constructMailEvent: 114_015,
  constructCrmEvent: 113_628,
  'whole root (`import *`)': 143_600,
  './verify': 7_120,
  './fetch': 627,
  './node': 4_619,
  './express': 4_401,
  './fastify': 3_901,
  './next': 171,
  './redis': 6_289,
  './postgres': 6_786,
  './testing createVirtualClock': 1_849,
  './testing createMailEmitter': 125_263,
  './testing/msw': 8_916,
  './manage': 10_354,
};

if (process.argv.includes('--by-module')) {
  const result = await build({
    ...WRANGLER_BUILD,
    stdin: {
      contents: workerSource({ root: './src/index.ts', fetch: './src/adapters/fetch.ts' }),
      resolveDir: new URL('..', import.meta.url).pathname,
      loader: 'ts',
    },
    mainFields: [...WRANGLER_BUILD.mainFields],
    conditions: [...WRANGLER_BUILD.conditions],
    external: [...WRANGLER_BUILD.external],
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const code = result.outputFiles[0]!.text;
  const inputs = Object.entries(Object.values(result.metafile.outputs)[0]!.inputs)
    .map(([file, { bytesInOutput }]) => [file.replace(/.*node_modules\//, ''), bytesInOutput] as const)
    .filter(([, bytes]) => bytes > 0)
    .sort((a, b) => b[1] - a[1]);
  const sum = (prefix: string) =>
    inputs.filter(([file]) => file.startsWith(prefix)).reduce((total, [, bytes]) => total + bytes, 0);
  console.log(`Worker: ${code.length} B minified, ${gzipSync(code).length} B gzip`);
  console.log(`  ours (src/): ${sum('src/')} B, zod: ${sum('zod/')} B`);
  for (const [file, bytes] of inputs) console.log(`${String(bytes).padStart(8)}  ${file}`);
  process.exit(0);
}

const consumer = installConsumer(await buildDist());
const version = (name: string) =>
  (
    JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

const rows: string[] = [];
for (const { name, source } of CONSUMER_CASES) {
  const { bytes, code } = await bundleConsumer(consumer, source);
  const zod = /\$ZodType|ZodError/.test(code) ? 'yes' : 'no';
  const before = BEFORE[name];
  rows.push(`| ${name} | ${before === undefined ? '–' : kb(before)} | ${kb(bytes)} | ${zod} |`);
  console.log(`${name.padEnd(32)} ${String(bytes).padStart(8)} B  zod: ${zod}`);
}

const section = [
  '## Bundle size per import (`bench/bundle-size.mts`)',
  '',
  `esbuild ${version('esbuild')} bundling one line of an app (\`export { x } from '@svc/webhooks…'\`), ESM,`,
  'minified, tree-shaken, resolving the built package through `package.json#exports` with zod',
  `${version('zod')} from node_modules (bundled; \`node:\` modules and optional peers external). Bytes of the`,
  'minified output, not compressed. *zod*: whether the bundle carries zod at all.',
  'test/package/bundle-size.test.ts guards every row with a budget and content checks (zod, and each',
  "service's schemas and event names, only where the import needs them).",
  '',
  '| import | before | after | zod |',
  '|---|---:|---:|---|',
  ...rows,
  '',
  '- *Before*: every module-level schema was an ordinary call (`z.looseObject({ ...fields })`), which no',
  '  bundler may drop, so any import of the root entry, even `isWebhookError`, carried all of zod and both',
  "  services' schemas. Now each module-level schema, field group and lookup table is built in a",
  '  `/* @__PURE__ */ define(() => …)` call (src/shared/define.ts): still built once when the module loads,',
  '  nothing changes on the validation path, but an app bundler drops what the app does not use. A',
  '  mail-only app carries no CRM schema or event name, and the reverse.',
  "- tsup's own `treeshake` (a rollup pass over our output) stays off: turned on, it changed no row by more",
  '  than 130 bytes. The one shared chunk per format (`WebhookError` defined once) is unchanged.',
  '- An import that validates carries zod: the receivers and `construct*Event` validate with `zod/mini`',
  '  (src/shared/mini-parse.ts; schemas built on first use), about 30 KB of zod minified where full zod',
  "  was about 83 KB. `./schemas` keeps full zod (the same definitions built with full zod's functions),",
  '  and so does an app that imports zod itself. Issues, messages and the `ZodError` cause of',
  '  `invalid_payload` are the same (test/shared/mini-parse.test.ts); see "Cold start" below and',
  '  docs/bundling.md.',
  "- *./testing createMailEmitter* carries both services: the emitter's fixtures module builds mail and CRM",
  '  payloads together (test code only; not in any production entry).',
].join('\n');

if (process.argv.includes('--dry-run')) console.log(`\n${section}`);
else writeBenchSection('bundle-size', section);
