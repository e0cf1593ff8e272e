/**
 * HTTP benchmark of the Node framework adapters: for bare node:http, Express 5, Fastify 5 and Hono 4
 * (on @hono/node-server), in one
 * run, interleaved, >= 3 rounds, medians:
 *   (a) raw   the framework's raw-body route answering 204, no verification
 *   (b) hmac  hand-written: raw body + node:crypto HMAC + timingSafeEqual + JSON.parse (the ceiling)
 *   (c) ours  our adapter: verification, zod validation, memory dedup (every request a new delivery id)
 *   (d) octokit  @octokit/webhooks createNodeMiddleware (verify + JSON.parse + emit, no dedup)
 *   (e) async  (c) behind a receiver wrapper the adapter cannot see through: it awaits `receive()`
 *   (f) before (c) from the build given with `--baseline <dist dir>` (an earlier commit), same rounds
 * Each server runs in its own child process (one core), autocannon in this one; 1 KB bodies, 127.0.0.1.
 *
 *   npx tsx bench/adapters-http.mts [--rounds 3] [--duration 3] [--only node,express] [--no-write]
 *     [--baseline /path/to/earlier/dist]
 * (a partial run, `--only`, never writes docs/benchmarks.md)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildDist } from '../test/package/dist.js';
import { writeBenchSection } from './docs-section.mjs';
import { deliveryHeaders } from './support.mjs';

const FRAMEWORKS = ['node', 'express', 'fastify', 'hono'] as const;
const SCENARIOS = ['raw', 'hmac', 'ours', 'octokit', 'async', 'before'] as const;
type Framework = (typeof FRAMEWORKS)[number];
type Scenario = (typeof SCENARIOS)[number];
const SECRET = 'whsec_bench_0123456789abcdef';
const PATH = '/webhooks/mail';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** (b): the least any verifying receiver must do. */
function verifyByHand(body: Buffer, header: string | string[] | undefined): number {
  const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`);
  const got = Buffer.from(typeof header === 'string' ? header : '');
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return 401;
  JSON.parse(body.toString('utf8'));
  return 200;
}

/**
 * Our package as users install it: the build `main()` made (tsup output), not the TypeScript sources
 * through tsx (whose per-closure `__name` wrappers and source maps would cost time users never pay).
 */
async function ours<T>(entry: string, dist = process.env.SVC_BENCH_DIST): Promise<T> {
  if (!dist) throw new Error('SVC_BENCH_DIST is not set: run this file without --serve.');
  return (await import(pathToFileURL(join(dist, `${entry}.js`)).href)) as T;
}

async function serve(framework: Framework, scenario: Scenario): Promise<number> {
  const baseline = scenario === 'before' ? process.env.SVC_BENCH_BASELINE : undefined;
  const { createMailReceiver, createMemoryStore } = await ours<typeof import('../src/index.js')>(
    'index',
    baseline,
  );
  // SVC_BENCH_MAX_KEYS (bench/instructions.mts): a small store, full after the warm-up.
  const maxKeys = Number(process.env.SVC_BENCH_MAX_KEYS) || undefined;
  const built = createMailReceiver({
    secret: SECRET,
    ...(maxKeys ? { dedup: createMemoryStore({ maxKeys }) } : {}),
  });
  built.onAny(() => {});
  // (e): the same receiver seen only through its public methods, so the adapter awaits receive().
  const receiver =
    scenario === 'async'
      ? {
          service: built.service,
          handle: (request: Request) => built.handle(request),
          receive: (input: Parameters<typeof built.receive>[0]) => built.receive(input),
        }
      : built;
  const { Webhooks, createNodeMiddleware } = await import('@octokit/webhooks');
  const webhooks = new Webhooks({ secret: SECRET });
  webhooks.on('push', () => {});
  const octokit = createNodeMiddleware(webhooks, { path: PATH });
  const rawNode: RequestListener = (req, res) => void readBody(req).then(() => res.writeHead(204).end());
  const hmacNode: RequestListener = (req, res) =>
    void readBody(req).then((body) => {
      const status = verifyByHand(body, req.headers['x-svcmail-sig']);
      res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}');
    });

  if (framework === 'node') {
    // The same hand-written route answering 204 without a body: what the answer itself costs
    // (docs/benchmarks.md, "200 with a body vs 204"; bench/instructions.mts http node hmac204).
    if ((scenario as string) === 'hmac204')
      return listenNode(
        createServer(
          (req, res) =>
            void readBody(req).then((body) => {
              const status = verifyByHand(body, req.headers['x-svcmail-sig']);
              res.writeHead(status === 200 ? 204 : status).end();
            }),
        ),
      );
    const { createNodeListener } = await ours<typeof import('../src/adapters/node/index.js')>(
      'node',
      baseline,
    );
    const listener: RequestListener = {
      raw: rawNode,
      hmac: hmacNode,
      ours: createNodeListener(receiver),
      async: createNodeListener(receiver),
      before: createNodeListener(receiver),
      octokit: (req: IncomingMessage, res: ServerResponse) => void octokit(req, res),
    }[scenario];
    return listenNode(createServer(listener));
  }
  if (framework === 'express') {
    const { default: express } = await import('express');
    const { createExpressMiddleware } = await ours<typeof import('../src/adapters/express.js')>(
      'express',
      baseline,
    );
    const app = express();
    // (a)/(b) read the stream by hand like our middleware does (faster than express.raw()).
    if (scenario === 'raw') app.post(PATH, rawNode);
    if (scenario === 'hmac') app.post(PATH, hmacNode);
    if (scenario === 'ours' || scenario === 'async' || scenario === 'before')
      app.post(PATH, createExpressMiddleware(receiver));
    if (scenario === 'octokit') app.use(octokit);
    return listenNode(createServer(app));
  }
  if (framework === 'hono') return serveHono(scenario, receiver, octokitWeb(webhooks), baseline);
  const { default: Fastify } = await import('fastify');
  const { createFastifyPlugin } = await ours<typeof import('../src/adapters/fastify.js')>(
    'fastify',
    baseline,
  );
  const app = Fastify();
  if (scenario === 'ours' || scenario === 'async' || scenario === 'before')
    app.register(createFastifyPlugin(receiver, { path: PATH }));
  else {
    app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      if (scenario === 'octokit') {
        // Leave the stream unread: Octokit's middleware reads it itself from request.raw.
        scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
        scope.post(PATH, (request, reply) => {
          reply.hijack();
          return octokit(request.raw, reply.raw);
        });
      } else {
        scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
        scope.post(PATH, (request, reply) => {
          if (scenario === 'raw') return reply.code(204).send();
          const status = verifyByHand(request.body as Buffer, request.headers['x-svcmail-sig']);
          return reply.code(status).header('content-type', 'application/json').send('{"ok":true}');
        });
      }
    });
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}

/** @octokit/webhooks' fetch-style middleware, the peer of (d) on Hono. */
function octokitWeb(webhooks: import('@octokit/webhooks').Webhooks) {
  return import('@octokit/webhooks').then(({ createWebMiddleware }) =>
    createWebMiddleware(webhooks, { path: PATH }),
  );
}

/**
 * Hono on @hono/node-server. (a) and (b) read the body as a Hono route does, `c.req.arrayBuffer()`
 * (which @hono/node-server reads straight from the Node request).
 */
async function serveHono(
  scenario: Scenario,
  receiver: Parameters<typeof import('../src/adapters/hono.js').createHonoMiddleware>[0],
  octokit: ReturnType<typeof octokitWeb>,
  baseline: string | undefined,
): Promise<number> {
  const { Hono } = await import('hono');
  const { createAdaptorServer } = await import('@hono/node-server');
  const { createHonoMiddleware } = await ours<typeof import('../src/adapters/hono.js')>('hono', baseline);
  const app = new Hono();
  if (scenario === 'raw')
    app.post(PATH, async (c) => {
      await c.req.arrayBuffer();
      return c.body(null, 204);
    });
  else if (scenario === 'hmac')
    app.post(PATH, async (c) => {
      const body = Buffer.from(await c.req.arrayBuffer());
      const status = verifyByHand(body, c.req.header('x-svcmail-sig'));
      return c.body('{"ok":true}', status as 200, { 'content-type': 'application/json' });
    });
  else if (scenario === 'octokit') {
    const middleware = await octokit;
    app.post(PATH, (c) => middleware(c.req.raw));
  } else app.post(PATH, createHonoMiddleware(receiver));
  return listenNode(createAdaptorServer({ fetch: app.fetch }) as ReturnType<typeof createServer>);
}

async function listenNode(server: ReturnType<typeof createServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

// ---- child mode ----
if (process.argv[2] === '--serve') {
  const port = await serve(process.argv[3] as Framework, process.argv[4] as Scenario);
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  // Exit normally, so a profiler or counter around this process (bench/instructions.mts) writes out.
  process.once('SIGTERM', () => process.exit(0));
} else {
  await main();
}

interface Prepared {
  headers: Record<string, string>;
  body: string;
}

/**
 * 1 KB deliveries signed with node:crypto, each with its own delivery id (so none is a duplicate:
 * receivers dedup by delivery id); `bodies` distinct bodies are shared round-robin to bound memory.
 */
function prepare(count: number, style: 'mail' | 'github', bodies = 50_000): Prepared[] {
  const signed = Array.from({ length: Math.min(count, bodies) }, (_, i) => {
    const base = {
      event: 'delivered',
      client_id: 'client_1',
      message_id: `m_${i}`,
      to: 'ana@example.com',
      provider: 'gmail',
    };
    const probe = JSON.stringify({ ...base, response: '' });
    const body = JSON.stringify({ ...base, response: 'x'.repeat(1024 - probe.length) });
    return { body, sig: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` };
  });
  return Array.from({ length: count }, (_, i) => {
    const id = randomUUID();
    const { body, sig } = signed[i % signed.length]!;
    const headers = deliveryHeaders(style, id, sig);
    return { headers, body };
  });
}

async function startChild(
  dist: string,
  framework: Framework,
  scenario: Scenario,
): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', framework, scenario],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, SVC_BENCH_DIST: dist } },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve((JSON.parse(out) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { port, child };
}

async function main(): Promise<void> {
  // autocannon ships no types (and @types/autocannon is not installed): the few fields used are typed here.
  const moduleName = 'autocannon';
  const { default: autocannon } = (await import(moduleName)) as {
    default: (options: Record<string, unknown>) => Promise<{
      requests: { average: number };
      non2xx: number;
      errors: number;
    }>;
  };
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? fallback : Number(process.argv[i + 1]);
  };
  const only = process.argv.includes('--only')
    ? (process.argv[process.argv.indexOf('--only') + 1] ?? '').split(',')
    : undefined;
  const frameworks = FRAMEWORKS.filter((f) => !only || only.includes(f));
  const baselineAt = process.argv.indexOf('--baseline');
  const baseline = baselineAt === -1 ? undefined : process.argv[baselineAt + 1];
  if (baseline) process.env.SVC_BENCH_BASELINE = baseline;
  const scenarios = SCENARIOS.filter((s) => s !== 'before' || baseline);
  const dist = await buildDist();
  const rounds = arg('--rounds', 3);
  const duration = arg('--duration', 3);
  const connections = 32;
  // Enough ids for the fastest server's warm-up plus run (about 40k requests/s here) without reuse.
  const ids = Math.max(50_000, Math.ceil(60_000 * (duration + 1)));
  const pool = { mail: prepare(ids, 'mail'), github: prepare(ids, 'github') };
  const results = new Map<string, number[]>();
  let wrapped = 0;
  let errors = 0;

  const run = async (port: number, set: Prepared[], seconds: number, from = 0) => {
    let next = from;
    const result = await autocannon({
      url: `http://127.0.0.1:${port}`,
      connections,
      duration: seconds,
      requests: [
        {
          method: 'POST',
          path: PATH,
          setupRequest: (request: Record<string, unknown>) => {
            const item = set[next++ % set.length] as Prepared;
            return { ...request, headers: item.headers, body: item.body };
          },
        },
      ],
    });
    return { result, sent: next };
  };

  for (let round = 1; round <= rounds; round++) {
    for (const framework of frameworks) {
      for (const scenario of scenarios) {
        const { port, child } = await startChild(dist, framework, scenario);
        const set = scenario === 'octokit' ? pool.github : pool.mail;
        // Warm-up (JIT); the measured run continues the id sequence, so no id repeats.
        const warm = await run(port, set, 1);
        const { result, sent } = await run(port, set, duration, warm.sent);
        if (scenario !== 'octokit' && sent > set.length) wrapped++;
        errors += result.non2xx + result.errors;
        const key = `${framework}/${scenario}`;
        results.set(key, [...(results.get(key) ?? []), result.requests.average]);
        console.error(
          `round ${round} ${key.padEnd(16)} ${Math.round(result.requests.average)} req/s  non2xx=${result.non2xx}`,
        );
        child.kill();
      }
    }
  }

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const rows = frameworks.map((framework) => {
    const m = Object.fromEntries(
      SCENARIOS.map((s) => [s, median(results.get(`${framework}/${s}`) ?? [])]),
    ) as Record<Scenario, number>;
    // Ratios per round (the scenarios of one round ran back to back), then their median: the load of
    // this shared machine drifts between rounds far more than within one.
    const per = (s: Scenario) => results.get(`${framework}/${s}`) ?? [];
    const ratio = (of: Scenario, over: Scenario) =>
      median(per(of).map((v, i) => v / (per(over)[i] ?? Number.NaN)));
    return {
      framework,
      ...m,
      ratio: ratio('ours', 'hmac'),
      vsOctokit: ratio('ours', 'octokit'),
      vsAsync: ratio('ours', 'async'),
      beforeRatio: baseline ? ratio('before', 'hmac') : Number.NaN,
    };
  });
  const pkg = (name: string) =>
    (
      JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as {
        version: string;
      }
    ).version;
  const table = [
    '| framework | (a) raw 204 | (b) HMAC ceiling | (c) @svc/webhooks | (d) @octokit/webhooks | (e) (c) awaiting receive() | (f) (c) before | (c)/(b) | (f)/(b) | (c)/(d) | (c)/(e) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.framework} | ${Math.round(r.raw)} | ${Math.round(r.hmac)} | ${Math.round(r.ours)} | ${Math.round(r.octokit)} | ${Math.round(r.async)} | ${baseline ? Math.round(r.before) : '–'} | ${(r.ratio * 100).toFixed(0)}% | ${baseline ? `${(r.beforeRatio * 100).toFixed(0)}%` : '–'} | ${r.vsOctokit.toFixed(2)}× | ${r.vsAsync.toFixed(2)}× |`,
    ),
  ].join('\n');
  console.log(table);
  const section = [
    '## Framework adapters over HTTP (`bench/adapters-http.mts`)',
    '',
    `Requests per second, median of ${rounds} interleaved rounds (${duration} s each after a 1 s warm-up, ${connections} connections, 1 KB JSON body, 127.0.0.1; each server in its own process, autocannon in another). The ratio columns are the median of the per-round ratios, which the machine's drifting load affects far less than the medians of the columns.`,
    '',
    table,
    '',
    "- (a) the framework's raw-body route answering 204 without verifying (node:http and Express read the stream by hand; Fastify uses a `parseAs: 'buffer'` parser; Hono `c.req.arrayBuffer()` on @hono/node-server).",
    '- (b) the same raw body plus node:crypto HMAC-SHA256, `timingSafeEqual` and `JSON.parse`: the ceiling for any verifying receiver in that framework.',
    '- (c) `createNodeListener` / `createExpressMiddleware` / `createFastifyPlugin` / `createHonoMiddleware` with a `createMailReceiver` (signature, zod validation of the payload, memory dedup claim + complete, one no-op handler). Every request carries a new delivery id and signature (precomputed), so none is short-circuited as a duplicate' +
      (wrapped ? ` (warning: ${wrapped} runs wrapped around the id pool)` : '') +
      '.',
    '- (e) the receiver of (c) behind a wrapper of its public methods, so the adapter awaits `receive()` (a promise per request): the plain `async` variant of the same code, in the same rounds.',
    `- (f) ${baseline ? 'the receiver and adapters of (c) from an earlier build given with `--baseline` (before the receive path was rewritten), in the same rounds' : 'not run (no `--baseline`)'}.`,
    '- (d) `@octokit/webhooks` `createNodeMiddleware` (verify, `JSON.parse`, emit to one no-op handler; no validation, no dedup): node:http directly, Express via `app.use`, Fastify via a scoped parser that leaves the stream unread and `reply.hijack()`, Hono via `createWebMiddleware` on `c.req.raw`.',
    `- Non-2xx answers or errors across the run: ${errors}.`,
    '- Read with care: this machine is 2 shared cores and autocannon shares them with the server (rounds differ by up to 1.5×); compare columns within a run, not across runs. Our package runs as built (tsup output), not from sources. With the memory store and a synchronous handler the receive path runs from the body to its outcome without a promise hop or timer (src/core/awaitable.ts, src/core/store-ops.ts); the adapters then await `receive()`, one promise per request: (e) measured the same receiver behind a wrapper when the adapters still had a synchronous side entrance, and showed no gap over HTTP, so that entrance was removed. In a tight loop (bench/verify-pipeline.mts) the receiver costs about 3 µs per delivery over the HMAC + `JSON.parse` ceiling at 1–2 KB (zod validation, dedup claim + complete with eviction at the 100,000-key cap); over HTTP the remaining gap to (b) is larger than that, and server CPU profiles of (b) and (c) differ mostly in socket writes and GC, which vary from run to run.',
    `- Machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores (shared with other work: noisy), ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; express ${pkg('express')}, fastify ${pkg('fastify')}, hono ${pkg('hono')} on @hono/node-server ${pkg('@hono/node-server')}, @octokit/webhooks ${pkg('@octokit/webhooks')}, autocannon ${pkg('autocannon')}.`,
  ].join('\n');
  if (only || process.argv.includes('--no-write')) {
    console.error('--only / --no-write: docs/benchmarks.md untouched.');
    process.exit(0);
  }
  writeBenchSection('adapters-http', section);
}
