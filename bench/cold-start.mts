/**
 * Cold start: what importing the package adds to a process, and what a typical Worker ships, for
 * four builds of the package made in the same run:
 *
 * - *first*: the sources at FIRST (default 7f0a4a4): every schema built on full zod when the module
 *   loads, the receivers parsing with those schemas;
 * - *before*: the sources at BASE (default 826e058): the receivers on `zod/mini`, schemas built on
 *   first use, zod imported from the app's node_modules everywhere;
 * - *built in everywhere*: BASE with `zod/mini` and zod's core built into the package (tsup
 *   `noExternal`), for bundlers too;
 * - *`#zod-kit`* (KIT, default 18d4346): the receivers' parts of zod behind package.json#imports:
 *   built into one file of the package for Node, the app's own zod for bundlers. Not adopted: it
 *   takes the tarball over its budget (docs/benchmarks.md, "Cold start").
 *
 * Import time: a fresh `node` process per run imports one specifier and prints how long the `import()`
 * took (process start excluded); the median and the fastest of RUNS runs, every specifier interleaved
 * with the others so load on the machine hits them alike. With `valgrind` on the PATH, also the
 * instructions the import adds to a process (callgrind: a process that imports it minus one that
 * imports nothing; deterministic where times are noisy). Worker bundle: both receivers behind the
 * fetch adapter, bundled as Wrangler does (esbuild, ESM, minified), bytes minified and gzip, zod's
 * share from esbuild's metafile; the same with the app using zod itself; the Lambda bundle; the
 * build's JavaScript packed (tar.gz of dist/ without declarations).
 *
 *   npx tsx bench/cold-start.mts            # writes its section of docs/benchmarks.md
 *   npx tsx bench/cold-start.mts --dry-run  # prints only
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { Options } from 'tsup';
import { installConsumer, WRANGLER_BUILD, workerSource } from '../test/package/consumer-bundle.js';
import { root } from '../test/package/dist.js';
import { writeBenchSection } from './docs-section.mjs';

const RUNS = Number(process.env.RUNS ?? 15);
const FIRST = process.env.FIRST ?? '7f0a4a4';
const BASE = process.env.BASE ?? '826e058';
// The commit that built the receivers' parts of zod into the package for Node (`#zod-kit`).
const KIT = process.env.KIT ?? '18d4346';
const CONFIG_FILES = ['tsup.config.ts', 'entries.json', 'package.json', 'tsconfig.json'];
const version = (name: string) =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

/** Builds a copy of the package whose sources `prepare` writes into `dir/src` (under node_modules/.cache). */
async function buildVariant(label: string, prepare: (dir: string) => void): Promise<string> {
  const dir = join(root, 'node_modules', '.cache', `cold-start-${label}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of CONFIG_FILES) cpSync(join(root, file), join(dir, file));
  prepare(dir);
  const config = (await import(join(dir, 'tsup.config.ts'))).default as Options;
  const { build: tsup } = await import('tsup');
  const outDir = join(dir, 'dist');
  await tsup({
    ...config,
    entry: Object.fromEntries(
      Object.entries(config.entry as Record<string, string>).map(([name, file]) => [name, join(dir, file)]),
    ),
    outDir,
    dts: false,
    clean: true,
    silent: true,
    config: false,
    tsconfig: join(dir, 'tsconfig.json'),
  });
  return outDir;
}

const fromGit = (commit: string) => (dir: string) =>
  execFileSync('sh', ['-c', `git archive ${commit} src | tar -x -C '${dir}'`], { cwd: root });
const variants = [
  {
    name: 'first',
    label: `first (${FIRST}: full zod, schemas built at load)`,
    dist: await buildVariant('first', fromGit(FIRST)),
  },
  {
    name: 'before',
    label: `before (${BASE}: \`zod/mini\` from node_modules)`,
    dist: await buildVariant('before', fromGit(BASE)),
  },
  {
    name: 'inlined',
    label: `${BASE} with zod built in everywhere (\`noExternal\`)`,
    dist: await buildVariant('inlined', (dir) => {
      fromGit(BASE)(dir);
      const config = join(dir, 'tsup.config.ts');
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace(
          'export default defineConfig({',
          'export default defineConfig({\n  noExternal: [/^zod\\/(mini|v4\\/core|v4\\/locales\\/)/],',
        ),
      );
    }),
  },
  {
    name: 'now',
    label: `\`#zod-kit\` (${KIT}: built in for Node only; not adopted)`,
    dist: await buildVariant('kit', (dir) => {
      fromGit(KIT)(dir);
      for (const file of ['tsup.config.ts', 'package.json'])
        writeFileSync(join(dir, file), execFileSync('git', ['show', `${KIT}:${file}`], { cwd: root }));
    }).then((dist) => {
      // The consumer gets today's package.json: the kit's `#zod-kit` map goes beside its files.
      const { imports } = JSON.parse(
        execFileSync('git', ['show', `${KIT}:package.json`], { cwd: root, encoding: 'utf8' }),
      );
      const scope = {
        type: 'module',
        sideEffects: false,
        imports: JSON.parse(JSON.stringify(imports).replaceAll('"./dist/', '"./')),
      };
      writeFileSync(join(dist, 'package.json'), JSON.stringify(scope));
      return dist;
    }),
  },
].map((variant) => ({ ...variant, consumer: installConsumer(variant.dist) }));

const WORKER = workerSource();
// The same Worker when the app validates its own input with zod.
const WORKER_WITH_ZOD = `${WORKER}
import * as z from 'zod';
export const order = z.object({ id: z.string(), total: z.number().int() });`;
// A Lambda function with both receivers, bundled by esbuild for node (docs/bundling.md).
const LAMBDA = `
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createLambdaHandler } from '@svc/webhooks/lambda';
export const handler = createLambdaHandler(() => ({
  '/webhooks/mail': createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET }),
  '/webhooks/crm': createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET }),
}));`;

/** The Worker as Wrangler bundles it (esbuild, ESM, minified, `workerd`/`worker`/`browser` conditions). */
async function workerBundle(consumer: string, contents = WORKER) {
  const result = await build({
    ...WRANGLER_BUILD,
    stdin: { contents, resolveDir: consumer, loader: 'js', sourcefile: 'worker.js' },
    mainFields: [...WRANGLER_BUILD.mainFields],
    conditions: [...WRANGLER_BUILD.conditions],
    external: [...WRANGLER_BUILD.external],
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  const output = Object.values(result.metafile.outputs)[0]!;
  const zod = Object.entries(output.inputs)
    .filter(([file]) => file.includes('node_modules/zod/'))
    .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
  return { bytes: Buffer.byteLength(code), gzip: gzipSync(code).length, zod };
}

/** The Lambda bundled for node; written beside the consumer so its import can be timed. */
async function lambdaBundle(consumer: string) {
  writeFileSync(join(consumer, 'lambda-app.mjs'), LAMBDA);
  await build({
    entryPoints: [join(consumer, 'lambda-app.mjs')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minify: true,
    outfile: join(consumer, 'lambda-bundle.mjs'),
    logLevel: 'silent',
  });
  const code = readFileSync(join(consumer, 'lambda-bundle.mjs'));
  return { bytes: code.length, gzip: gzipSync(code).length };
}

/** The build's JavaScript as the tarball packs it: tar.gz of dist/ without metafiles (and no .d.ts). */
const packedJs = (dist: string) => {
  const files = readdirSync(dist).filter(
    (file) => /\.(c?js|json)$/.test(file) && !file.startsWith('metafile'),
  );
  return execFileSync('tar', ['-cz', '-C', dist, ...files]).length;
};

const sizes = new Map<
  string,
  {
    worker: Awaited<ReturnType<typeof workerBundle>>;
    withZod: Awaited<ReturnType<typeof workerBundle>>;
    lambda: { bytes: number; gzip: number };
    packed: number;
  }
>();
for (const v of variants)
  sizes.set(v.name, {
    worker: await workerBundle(v.consumer),
    withZod: await workerBundle(v.consumer, WORKER_WITH_ZOD),
    lambda: await lambdaBundle(v.consumer),
    packed: packedJs(v.dist),
  });

// What each process imports: zod alone (the floor of an entry that validates with it), then per build
// the root entry as installed, the root with the app's own zod, and the bundled Lambda.
const cases = [
  { name: "`import('zod')`", cwd: variants[0]!.consumer, specifier: 'zod' },
  { name: "`import('zod/mini')`", cwd: variants[0]!.consumer, specifier: 'zod/mini' },
  ...variants.flatMap((v) => [
    { name: `${v.label}: \`import('@svc/webhooks')\``, cwd: v.consumer, specifier: '@svc/webhooks' },
    { name: `${v.label}: zod, then the root`, cwd: v.consumer, specifier: ['zod', '@svc/webhooks'] },
    { name: `${v.label}: Lambda bundle`, cwd: v.consumer, specifier: './lambda-bundle.mjs' },
  ]),
];
const imports = (specifier: string | string[]) =>
  [specifier]
    .flat()
    .map((one) => `await import(${JSON.stringify(one)});`)
    .join(' ');
const importMs = (cwd: string, specifier: string | string[]): number => {
  const script = `const t = performance.now(); ${imports(specifier)} console.log(performance.now() - t);`;
  return Number(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd, encoding: 'utf8' }),
  );
};
const samples = cases.map(() => [] as number[]);
for (let run = 0; run < RUNS; run++) {
  for (const [i, c] of cases.entries()) samples[i]!.push(importMs(c.cwd, c.specifier));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const hasValgrind = (() => {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const instructions = (cwd: string, code: string): number => {
  const out = join(tmpdir(), `cold-start-${process.pid}.callgrind`);
  execFileSync(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--single-threaded',
      '--input-type=module',
      '-e',
      code,
    ],
    { cwd, stdio: 'ignore' },
  );
  const total = Number(/^totals:\s+(\d+)/m.exec(readFileSync(out, 'utf8'))?.[1]);
  rmSync(out, { force: true });
  return total;
};
const counted: (number | undefined)[] = [];
if (hasValgrind && process.env.CALLGRIND !== '0') {
  const base = instructions(variants[0]!.consumer, '');
  for (const c of cases) counted.push(instructions(c.cwd, imports(c.specifier)) - base);
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const millions = (n: number | undefined) => (n === undefined ? 'n/a' : `${(n / 1e6).toFixed(1)} M`);
const importRows = cases.map(
  (c, i) =>
    `| ${c.name} | ${median(samples[i]!).toFixed(1)} ms | ${Math.min(...samples[i]!).toFixed(1)} ms | ${millions(counted[i])} |`,
);
const sizeRows = variants.map((v) => {
  const { worker, withZod, lambda, packed } = sizes.get(v.name)!;
  return `| ${v.label} | ${kb(worker.bytes)} | **${kb(worker.gzip)}** | ${kb(worker.zod)} | ${kb(withZod.gzip)} | ${kb(lambda.bytes)} | ${kb(lambda.gzip)} | ${kb(packed)} |`;
});
const count = (label: string) => counted[cases.findIndex((c) => c.name === label)];
type Variant = (typeof variants)[number];
const rootCount = (v: Variant) => count(`${v.label}: \`import('@svc/webhooks')\``);
const [first, before, inlined, now] = variants as [Variant, Variant, Variant, Variant];
const change = (from: number | undefined, to: number | undefined) =>
  from === undefined || to === undefined ? 'n/a' : `${Math.round(((to - from) / from) * 100)}%`;
const size = (name: string) => sizes.get(name)!;
const section = `
## Cold start (\`bench/cold-start.mts\`)

Machine: ${cpus()[0]?.model.trim()} (${cpus().length} vCPU, shared and loaded), Node ${process.version},
zod ${version('zod')}, esbuild ${version('esbuild')}, tsup ${version('tsup')}, run ${new Date().toISOString().slice(0, 10)}.
Four builds of the package made in the same run: *first* (${FIRST}, full zod), *before* (${BASE}: the
receivers on \`zod/mini\` from the app's node_modules), ${BASE} with \`zod/mini\` built into the package
for every runtime (tsup \`noExternal\`), and \`#zod-kit\` (${KIT}, not adopted): the receivers' parts of zod behind
package.json#imports, built into one file of the package for Node and the app's own zod for
bundlers. Import time: one fresh process per run, the \`import()\` alone timed (process start
excluded), median and fastest of ${RUNS} interleaved runs of the built package resolved through
\`package.json#exports\` from node_modules; instructions: callgrind, the process minus one that imports
nothing.

| import | median | fastest | instructions (callgrind) |
|---|---:|---:|---:|
${importRows.join('\n')}

Bundles (esbuild, ESM, minified, as docs/bundling.md builds them): the Worker has both receivers behind
\`createFetchHandler\` (Wrangler's conditions, \`node:*\` external); *with the app's zod*: the same Worker
also validating its own input with \`zod\`; the Lambda both receivers behind \`createLambdaHandler\`
(\`--platform=node\`). *JS packed*: the build's .js and .cjs files as tar.gz (the tarball's share).

| build | Worker minified | Worker gzip | of which zod (minified) | Worker with the app's zod, gzip | Lambda minified | Lambda gzip | JS packed |
|---|---:|---:|---:|---:|---:|---:|---:|
${sizeRows.join('\n')}

- **Measured, not adopted: \`#zod-kit\`** (${KIT}). The root import from node_modules goes from
  ${millions(rootCount(before))} to ${millions(rootCount(now))} instructions (${change(rootCount(before), rootCount(now))}; ${millions(rootCount(first))} at ${FIRST}): Node loads the
  receivers' parts of zod from one file of the package instead of \`zod/v4/core\`'s index, which loads
  all of core, every locale and the JSON Schema code. Bundlers resolve \`#zod-kit\` to the app's own
  \`zod\` (the \`module\` condition; Wrangler's conditions through \`default\`), so the Worker
  (${kb(size('before').worker.gzip)} → ${kb(size('now').worker.gzip)} gzip), the Worker that also uses zod
  (${kb(size('before').withZod.gzip)} → ${kb(size('now').withZod.gzip)}) and the bundled Lambda do not change. Users saw the same
  validation (its test, at ${KIT}: the installed package in a fresh Node process loads the built-in
  file, refuses what \`@svc/webhooks/schemas\` refuses with the same issues and messages, a
  \`ZodError\` cause, and follows \`z.config\`, which zod keeps on \`globalThis\`). But the built-in copy
  adds ${kb(size('now').packed - size('before').packed)} of packed JavaScript (ESM and CJS; minified and ESM only, about 9.7 KB), and
  the tarball is 498.1 kB of its 500 kB budget without it (526.2 kB with it). Not adopted until the
  tarball has room; it is the change that meets the root import goal's direction.
- **Not adopted: zod built in everywhere** (tsup \`noExternal\`). Its root import is about the same
  (${millions(rootCount(inlined))}), with the same tarball cost, and a bundle that also uses zod carries two copies:
  the Worker with the app's zod grows from ${kb(size('before').withZod.gzip)} to ${kb(size('inlined').withZod.gzip)} gzip.
- **Goals not met.** Root import ≤ 50 ms: ${millions(rootCount(before))} instructions from node_modules as shipped; bundled,
  the Lambda imports in ${millions(count(`${before.label}: Lambda bundle`))}. A Worker ≤ 30 KB gzip: ${kb(size('before').worker.gzip)}; "What a Worker
  carries" below lists its bytes by module.
- Times on this shared machine drift by 2× between runs (medians above); instruction counts move by a
  few million between runs of the same build (the empty process they are taken from varies by about 5 M).
`;
if (process.argv.includes('--dry-run')) console.log(section);
else writeBenchSection('cold-start', section);
