import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIL_SECRET, mailDelivery } from './support/deliveries.js';

// docs/adapters-hono.md: the block that creates the receiver from the Worker's bindings, taken from
// the page as written, bundled with Hono and the library sources, run in workerd (miniflare) without
// nodejs_compat. A second app in the same Worker puts a body-reading middleware before the route.
const ROOT = join(import.meta.dirname, '../..');
const WORK = join(ROOT, '.tmp/hono-workerd');

function docsSnippet(): string {
  const page = readFileSync(join(ROOT, 'docs/adapters-hono.md'), 'utf8');
  const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const snippet = blocks.find((block) => block.includes('c.env.'));
  if (snippet === undefined) throw new Error('docs/adapters-hono.md has no block reading c.env');
  return snippet;
}

const PRE_READ = `
import { type Context, Hono } from 'hono';
import { createMailReceiver } from '@svc/webhooks';
import { createHonoMiddleware } from '@svc/webhooks/hono';
import docs from './snippet.js';

type Env = { Bindings: { SVC_MAIL_WEBHOOK_SECRET: string } };
const pre = new Hono<Env>();
const receiver = createHonoMiddleware((c: Context<Env>) =>
  createMailReceiver({ secret: c.env.SVC_MAIL_WEBHOOK_SECRET, logger: (entry) => console.log(entry.message, String(entry.fields.err ?? '')) }),
);
pre.post('/json/*', async (c, next) => { await c.req.json(); await next(); });
pre.post('/bytes/*', async (c, next) => { await c.req.arrayBuffer(); await next(); });
pre.post('*', receiver);

export default {
  fetch: (request: Request, env: Env['Bindings'], ctx: ExecutionContext) =>
    new URL(request.url).pathname.startsWith('/webhooks/')
      ? docs.fetch(request, env, ctx)
      : pre.fetch(request, env, ctx),
};
`;

async function bundleWorker(): Promise<string> {
  mkdirSync(WORK, { recursive: true });
  writeFileSync(join(WORK, 'snippet.ts'), docsSnippet());
  writeFileSync(join(WORK, 'worker.ts'), PRE_READ);
  const entries: Record<string, string> = JSON.parse(readFileSync(join(ROOT, 'entries.json'), 'utf8'));
  const alias = Object.fromEntries(
    Object.entries(entries).map(([subpath, file]) => [
      subpath === '.' ? '@svc/webhooks' : `@svc/webhooks/${subpath}`,
      join(ROOT, file),
    ]),
  );
  const result = await build({
    entryPoints: [join(WORK, 'worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'import'],
    mainFields: ['module', 'main'],
    alias,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

describe('Hono in workerd (miniflare), without nodejs_compat', () => {
  let mf: Miniflare;
  let stdout = '';
  beforeAll(async () => {
    mf = new Miniflare({
      modules: true,
      script: await bundleWorker(),
      compatibilityDate: '2025-01-01',
      bindings: { SVC_MAIL_WEBHOOK_SECRET: MAIL_SECRET },
      handleRuntimeStdio: (out: Readable, err: Readable) => {
        out.setEncoding('utf8').on('data', (text: string) => {
          stdout += text;
        });
        err.resume();
      },
    });
    await mf.ready;
  }, 60_000);
  afterAll(() => mf?.dispose());

  const post = async (path: string, delivery = mailDelivery(), headers = delivery.headers) => {
    const response = await mf.dispatchFetch(`http://localhost${path}`, {
      method: 'POST',
      body: delivery.body,
      headers,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const lines = (text: string) => stdout.split('\n').filter((line) => line.includes(text)).length;

  it('the docs snippet handles a delivery once, acknowledges its duplicate, refuses a forgery', async () => {
    const delivery = mailDelivery();
    expect(await post('/webhooks/mail', delivery)).toEqual({ status: 200, body: { ok: true } });
    expect(await post('/webhooks/mail', delivery)).toEqual({
      status: 200,
      body: { ok: true, result: 'duplicate' },
    });
    const forged = await post('/webhooks/mail', delivery, {
      ...delivery.headers,
      'x-svcmail-sig': `sha256=${'0'.repeat(64)}`,
    });
    expect(forged.status).toBe(401);
    const messageId = `m_${delivery.deliveryId}`;
    await expect.poll(() => lines(`delivered ${messageId}`), { timeout: 5_000 }).toBe(1);
  });

  it('a middleware read c.req.json() first: 500 raw_body_unavailable, the fix logged', async () => {
    const { status, body } = await post('/json/mail');
    expect(status).toBe(500);
    expect((body.error as { code: string }).code).toBe('raw_body_unavailable');
    await expect.poll(() => lines('await c.req.arrayBuffer()'), { timeout: 5_000 }).toBe(1);
  });

  it('a middleware read c.req.arrayBuffer() first: the bytes Hono kept are used', async () => {
    expect((await post('/bytes/mail')).status).toBe(200);
  });
});
