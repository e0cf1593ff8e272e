/**
 * Cold start: what importing the package adds to a process, and what a typical Worker ships.
 *
 * - Import time: a fresh `node` process per run imports one specifier and prints how long the
 *   `import()` took (process start excluded); the median and the fastest of RUNS runs, each specifier
 *   interleaved with the others so load on the machine hits them alike. With `valgrind` on the PATH,
 *   also the instructions the import adds to a process (callgrind, a process that imports it minus
 *   one that imports nothing; deterministic where times are noisy). zod and `zod/mini` alone are the
 *   floor of an entry that validates with either.
 * - Worker bundle: a Worker with both receivers behind the fetch adapter, bundled as Wrangler does
 *   (esbuild, ESM, minified), bytes minified and gzip; zod's share from esbuild's metafile. Beside it,
 *   the same number of object schemas written with `zod` and with `zod/mini`: what the internal parse
 *   could weigh on `zod/mini`.
 *
 *   npx tsx bench/cold-start.mts            # writes its section of docs/benchmarks.md
 *   npx tsx bench/cold-start.mts --dry-run  # prints only
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { bundleConsumer, installConsumer } from '../test/package/consumer-bundle.js';
import { buildDist, root } from '../test/package/dist.js';
import { writeBenchSection } from './docs-section.mjs';

const RUNS = Number(process.env.RUNS ?? 15);
const consumer = installConsumer(await buildDist());
const version = (name: string) =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

// A Lambda function with both receivers, as installed (node_modules) and bundled by esbuild.
const LAMBDA = `
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createLambdaHandler } from '@svc/webhooks/lambda';
export const handler = createLambdaHandler(() => ({
  '/webhooks/mail': createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET }),
  '/webhooks/crm': createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET }),
}));`;
writeFileSync(join(consumer, 'lambda-app.mjs'), LAMBDA);
await build({
  entryPoints: [join(consumer, 'lambda-app.mjs')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  minify: true,
  outfile: join(consumer, 'lambda-bundle.mjs'),
});
const lambdaBytes = readFileSync(join(consumer, 'lambda-bundle.mjs'));

const SPECIFIERS = [
  'zod',
  'zod/mini',
  '@svc/webhooks',
  '@svc/webhooks/verify',
  '@svc/webhooks/fetch',
  './lambda-app.mjs',
  './lambda-bundle.mjs',
];
const importMs = (specifier: string): number => {
  const script = `const t = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - t);`;
  return Number(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: consumer,
      encoding: 'utf8',
    }),
  );
};
const samples = new Map<string, number[]>(SPECIFIERS.map((s) => [s, []]));
for (let run = 0; run < RUNS; run++) for (const s of SPECIFIERS) samples.get(s)!.push(importMs(s));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const hasValgrind = (() => {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const instructions = (code: string): number => {
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
    { cwd: consumer, stdio: 'ignore' },
  );
  const total = Number(/^totals:\s+(\d+)/m.exec(readFileSync(out, 'utf8'))?.[1]);
  rmSync(out, { force: true });
  return total;
};
const counted = new Map<string, number>();
if (hasValgrind) {
  const base = instructions('');
  for (const s of SPECIFIERS) counted.set(s, instructions(`await import(${JSON.stringify(s)});`) - base);
}

const WORKER = `
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
export default {
  fetch: createFetchHandler((env) => ({
    '/webhooks/mail': createMailReceiver({ secret: env.SVC_MAIL_WEBHOOK_SECRET }),
    '/webhooks/crm': createCrmReceiver({ secret: env.SVC_CRM_WEBHOOK_SECRET }),
  })),
};`;
const worker = await bundleConsumer(consumer, WORKER);
const zodShare = async (): Promise<number> => {
  const result = await build({
    stdin: { contents: WORKER, resolveDir: consumer, loader: 'js', sourcefile: 'worker.js' },
    bundle: true,
    format: 'esm',
    minify: true,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['import'],
    external: ['node:*'],
    metafile: true,
    write: false,
  });
  const output = Object.values(result.metafile.outputs)[0]!;
  return Object.entries(output.inputs)
    .filter(([file]) => file.includes('node_modules/zod/'))
    .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
};
const zodBytes = await zodShare();

// Ten object schemas with string, enum, number and optional fields: the shape of our payload schemas.
const schemas = (api: string) => `
import * as z from '${api}';
const shapes = Array.from({ length: 10 }, (_, i) => z.object({
  id: z.string(), at: z.string(), kind: z.enum(['a', 'b', 'c']), n: z.number(), note: z.optional(z.string()),
}));
export const parse = (i, v) => shapes[i].safeParse(v);`;
const floor = async (api: string) => bundleConsumer(consumer, schemas(api));
const [full, mini] = [await floor('zod'), await floor('zod/mini')];

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const gz = (code: string) => gzipSync(code).length;
const millions = (n: number | undefined) => (n === undefined ? 'n/a' : `${(n / 1e6).toFixed(1)} M`);
const rows = SPECIFIERS.map(
  (s) =>
    `| \`import('${s}')\` | ${median(samples.get(s)!).toFixed(1)} ms | ${Math.min(...samples.get(s)!).toFixed(1)} ms | ${millions(counted.get(s))} |`,
);
const section = `
## Cold start (\`bench/cold-start.mts\`)

Machine: ${cpus()[0]?.model.trim()} (${cpus().length} vCPU, shared and loaded), Node ${process.version},
zod ${version('zod')}, esbuild ${version('esbuild')}, run ${new Date().toISOString().slice(0, 10)}.
\`./lambda-app.mjs\` is a Lambda handler with both receivers importing the installed package;
\`./lambda-bundle.mjs\` the same file bundled by esbuild (docs/adapters.md, "Bundling for Workers and
Lambda"). Import time: one fresh process per run, the \`import()\` alone timed (process start excluded), median
of ${RUNS} interleaved runs of the built package resolved through \`package.json#exports\`.

| import | median | fastest | instructions (callgrind) |
|---|---:|---:|---:|
${rows.join('\n')}

| bundle (esbuild, ESM, minified) | minified | gzip | of which zod (minified) |
|---|---:|---:|---:|
| Worker: both receivers behind \`createFetchHandler\` | ${kb(worker.bytes)} | ${kb(gz(worker.code))} | ${kb(zodBytes)} |
| Lambda: both receivers behind \`createLambdaHandler\` (\`--platform=node\`) | ${kb(lambdaBytes.length)} | ${kb(gzipSync(lambdaBytes).length)} | |
| 10 object schemas on \`zod\` | ${kb(full.bytes)} | ${kb(gz(full.code))} | all but the schemas |
| 10 object schemas on \`zod/mini\` | ${kb(mini.bytes)} | ${kb(gz(mini.code))} | all but the schemas |
`;
if (process.argv.includes('--dry-run')) console.log(section);
else writeBenchSection('cold-start', section);
