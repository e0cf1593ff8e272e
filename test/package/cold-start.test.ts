import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { installConsumer, WRANGLER_BUILD, workerSource } from './consumer-bundle.js';
import { buildDist } from './dist.js';

// The receivers validate with zod/mini (src/shared/mini-parse.ts): a Worker with both receivers must
// not carry full zod's method-chaining API (zod/v4/classic), which only `@svc/webhooks/schemas` or the
// app's own `zod` import brings in (docs/bundling.md). Sizes are in docs/benchmarks.md ("Cold start").

let consumer: string;
beforeAll(async () => {
  consumer = installConsumer(await buildDist());
});

/** The zod modules a Wrangler-style bundle of `source` includes (esbuild's metafile). */
async function zodInputs(source: string): Promise<string[]> {
  const result = await build({
    ...WRANGLER_BUILD,
    stdin: { contents: source, resolveDir: consumer, loader: 'js', sourcefile: 'worker.js' },
    mainFields: [...WRANGLER_BUILD.mainFields],
    conditions: [...WRANGLER_BUILD.conditions],
    external: [...WRANGLER_BUILD.external],
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs).filter((file) => file.includes('node_modules/zod/'));
}

const WORKER = workerSource();

describe('cold start: what a Worker bundles of zod', () => {
  it('both receivers bring zod/mini and zod core, not full zod', async () => {
    const inputs = await zodInputs(WORKER);
    expect(inputs.some((file) => file.includes('zod/v4/mini/'))).toBe(true);
    expect(inputs.filter((file) => file.includes('zod/v4/classic/'))).toEqual([]);
  });

  it('@svc/webhooks/schemas still brings full zod', async () => {
    const inputs = await zodInputs(`${WORKER}\nexport { mailPayloadSchemas } from '@svc/webhooks/schemas';`);
    expect(inputs.some((file) => file.includes('zod/v4/classic/'))).toBe(true);
  });
});
