/**
 * What observability costs a receiver, over HTTP (node:http + `createNodeListener`, 1 KB deliveries,
 * every one a new delivery id, a memory store full after the warm-up), in one run:
 *   plain      no `onOutcome`, no `telemetry` (warnings and errors to the console: none happen)
 *   outcome    `onOutcome: () => {}`
 *   otel-off   `telemetry: createOtelTelemetry()`, `@opentelemetry/api` loaded, no SDK registered
 *   sdk        an SDK registered as an app that traces has it (AsyncLocalStorage context manager,
 *              tracer provider with a batch processor, meter provider with a reader, exporters that
 *              drop everything, Node's HTTP auto-instrumentation: a server span per request), no
 *              `telemetry`
 *   otel-sdk   the same SDK, and `telemetry: createOtelTelemetry()`: a span and three metric
 *              recordings per delivery
 *   before     `plain` from the build given with `--baseline <dist dir>` (an earlier commit)
 *
 *   npx tsx bench/otel.mts [--rounds 5] [--duration 3] [--baseline DIR] [--only plain,sdk] [--no-write]
 *     requests/s: each server in its own process, autocannon (32 connections) in this one, the
 *     variants interleaved per round; ratios are medians of per-round ratios.
 *   npx tsx bench/otel.mts --instructions [--requests 6000] [--warm 3000] [--baseline DIR]
 *     instructions per request under Valgrind's callgrind (as bench/instructions.mts: V8 single-threaded,
 *     counting only the measured requests, one keep-alive connection): a count repeats to ~0.1%, so it
 *     shows a difference the shared machine's timings cannot.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildDist } from '../test/package/dist.js';
import { countsOf } from './callgrind.mjs';
import { writeBenchSection } from './docs-section.mjs';
import { deliveryHeaders, mailBody, median } from './support.mjs';

const VARIANTS = ['plain', 'outcome', 'otel-off', 'sdk', 'otel-sdk', 'before'] as const;
type Variant = (typeof VARIANTS)[number];
const SECRET = 'whsec_bench_0123456789abcdef';
const PATH = '/webhooks/mail';
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};

/**
 * The SDK as an app registers it, with exporters that drop what they get: Node's HTTP
 * auto-instrumentation makes a server span (and HTTP metrics) per request, as in an app that traces.
 */
async function registerSdk(): Promise<void> {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import(
    '@opentelemetry/sdk-metrics'
  );
  const done = (_items: unknown, callback: (result: { code: 0 }) => void) => callback({ code: 0 });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor({ export: done, shutdown: async () => {} })],
    }),
  );
  metrics.setGlobalMeterProvider(
    new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({
          exporter: {
            export: done,
            forceFlush: async () => {},
            shutdown: async () => {},
            selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
          },
          exportIntervalMillis: 5_000,
        }),
      ],
    }),
  );
  new HttpInstrumentation().enable();
  // The instrumentation patches `http` when it is loaded: load it (again) through require.
  createRequire(import.meta.url)('node:http');
}

/** Child: one server of `variant`; prints its port. */
async function serve(variant: Variant): Promise<void> {
  const dist = variant === 'before' ? process.env.SVC_BENCH_BASELINE! : process.env.SVC_BENCH_DIST!;
  const load = async <T,>(entry: string) =>
    (await import(pathToFileURL(join(dist, `${entry}.js`)).href)) as T;
  if (variant === 'sdk' || variant === 'otel-sdk') await registerSdk();
  const { createMailReceiver, createMemoryStore } = await load<typeof import('../src/index.js')>('index');
  const { createNodeListener } = await load<typeof import('../src/adapters/node/index.js')>('node');
  const telemetry =
    variant === 'otel-off' || variant === 'otel-sdk'
      ? (await load<typeof import('../src/otel/index.js')>('otel')).createOtelTelemetry()
      : undefined;
  const receiver = createMailReceiver({
    secret: SECRET,
    dedup: createMemoryStore({ maxKeys: 2_000 }),
    ...(telemetry ? { telemetry } : {}),
    ...(variant === 'outcome' ? { onOutcome: () => {} } : {}),
  }).onAny(() => {});
  const server = createServer(createNodeListener(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

function start(variant: Variant, env: Record<string, string>, counter: string[] = []) {
  // Under a counter: V8 single-threaded with a fixed GC schedule, so a count repeats (bench/instructions.mts).
  const node = [
    ...(counter.length ? ['--single-threaded', '--predictable-gc-schedule'] : []),
    '--import',
    'tsx',
    fileURLToPath(import.meta.url),
    '--serve',
    variant,
  ];
  const [command, ...args] = counter.length
    ? [...counter, process.execPath, ...node]
    : [process.execPath, ...node];
  const child = spawn(command!, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const port = new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${variant} server exited ${code}`)));
  });
  return { child, port };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Sends `n` signed deliveries with new ids, one at a time, on one keep-alive connection. */
function sender(port: number): (n: number) => Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = mailBody(1024);
  const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const headers = deliveryHeaders('mail', randomUUID(), sig);
      const req = request({ port, host: '127.0.0.1', method: 'POST', path: PATH, agent, headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.resume().once('end', resolve);
      });
      req.once('error', reject).end(body);
    });
  return async (n) => {
    for (let i = 0; i < n; i++) await one();
  };
}

/** Instructions per request of each variant: without the collector's own, and in all. */
async function instructions(
  variants: Variant[],
  env: Record<string, string>,
): Promise<Map<Variant, { own: number; total: number }>> {
  const requests = arg('--requests', 6_000);
  const warm = arg('--warm', 3_000);
  const counts = new Map<Variant, { own: number; total: number }>();
  for (const variant of variants) {
    const out = join(process.env.TMPDIR ?? '/tmp', `svc-otel-${process.pid}-${variant}.out`);
    const counter = ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`];
    const { child, port } = start(variant, env, counter);
    const send = sender(await port);
    const counting = (on: boolean) =>
      execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(child.pid)]);
    await send(warm);
    counting(true);
    await send(requests);
    counting(false);
    await stop(child);
    const { total, collector } = countsOf(readFileSync(out, 'utf8'));
    rmSync(out, { force: true });
    const count = { own: Math.round((total - collector) / requests), total: Math.round(total / requests) };
    counts.set(variant, count);
    console.error(
      `${variant.padEnd(9)} ${count.own.toLocaleString('en-US')} instructions per request without the collector (${count.total.toLocaleString('en-US')})`,
    );
  }
  return counts;
}

async function throughput(variants: Variant[], env: Record<string, string>): Promise<Map<Variant, number[]>> {
  const moduleName = 'autocannon';
  const { default: autocannon } = (await import(moduleName)) as {
    default: (options: Record<string, unknown>) => Promise<{ requests: { average: number }; non2xx: number }>;
  };
  const rounds = arg('--rounds', 5);
  const duration = arg('--duration', 3);
  const body = mailBody(1024).toString();
  const sig = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  const results = new Map<Variant, number[]>();
  for (let round = 1; round <= rounds; round++) {
    for (const variant of variants) {
      const { child, port } = start(variant, env);
      const url = `http://127.0.0.1:${await port}`;
      const run = (seconds: number) =>
        autocannon({
          url,
          connections: 32,
          duration: seconds,
          requests: [
            {
              method: 'POST',
              path: PATH,
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                headers: deliveryHeaders('mail', randomUUID(), sig),
                body,
              }),
            },
          ],
        });
      await run(1);
      const result = await run(duration);
      if (result.non2xx > 0) throw new Error(`${variant}: ${result.non2xx} answers were not 2xx`);
      results.set(variant, [...(results.get(variant) ?? []), result.requests.average]);
      console.error(`round ${round} ${variant.padEnd(9)} ${Math.round(result.requests.average)} req/s`);
      await stop(child);
    }
  }
  return results;
}

async function main(): Promise<void> {
  const baselineAt = process.argv.indexOf('--baseline');
  const baseline = baselineAt === -1 ? undefined : process.argv[baselineAt + 1]!;
  const dist = await buildDist();
  const env = { SVC_BENCH_DIST: dist, ...(baseline ? { SVC_BENCH_BASELINE: baseline } : {}) };
  // --only a,b: those variants alone (a partial run never writes docs/benchmarks.md).
  const onlyAt = process.argv.indexOf('--only');
  const only = onlyAt === -1 ? undefined : (process.argv[onlyAt + 1] ?? '').split(',');
  if (only) process.argv.push('--no-write');
  const variants = VARIANTS.filter((v) => (v !== 'before' || baseline) && (!only || only.includes(v)));
  const machine = `${cpus()[0]?.model.split(' ').slice(0, 2).join(' ')} (${cpus().length} vCPU, shared), Node ${process.version}, run ${new Date().toISOString().slice(0, 10)}`;
  const pct = (a: number, b: number) => `${a >= b ? '+' : '−'}${Math.abs((a / b - 1) * 100).toFixed(2)}%`;
  if (process.argv.includes('--instructions')) {
    const counts = await instructions(variants, env);
    const of = (v: Variant) => counts.get(v) ?? { own: 0, total: 0 };
    const rows = variants.map((v) => {
      const against = v === 'otel-sdk' ? 'sdk' : 'plain';
      const delta = v === 'plain' ? '' : `${pct(of(v).own, of(against).own)} vs ${against}`;
      return `| ${v} | ${of(v).own.toLocaleString('en-US')} (${of(v).total.toLocaleString('en-US')}) | ${delta} |`;
    });
    const section = [
      '### Observability: instructions per request (`bench/otel.mts --instructions`)',
      '',
      `Machine: ${machine}. Callgrind, ${arg('--requests', 6_000)} requests counted after ${arg('--warm', 3_000)}, one keep-alive connection, node:http + \`createNodeListener\`, 1 KB deliveries with new ids, a memory store of 2,000 keys. Instructions per request without the garbage collector's own (with it in parentheses); the difference compares the former. \`before\`: the plain receiver of the commit this work started from.`,
      '',
      '| variant | instructions per request | difference |',
      '|---|---:|---:|',
      ...rows,
    ].join('\n');
    if (!process.argv.includes('--no-write')) writeBenchSection('otel-instructions', section);
    else console.log(section);
    return;
  }
  const results = await throughput(variants, env);
  const perRound = (v: Variant, against: Variant) =>
    median((results.get(v) ?? []).map((value, i) => value / (results.get(against)?.[i] ?? value)));
  const rows = variants.map((v) => {
    const against = v === 'otel-sdk' ? 'sdk' : 'plain';
    const ratio = v === 'plain' ? '' : `${perRound(v, against).toFixed(3)} (vs ${against})`;
    return `| ${v} | ${Math.round(median(results.get(v) ?? [])).toLocaleString('en-US')} | ${ratio} |`;
  });
  const section = [
    '### Observability over HTTP (`bench/otel.mts`)',
    '',
    `Machine: ${machine}. Requests per second, median of ${arg('--rounds', 5)} interleaved rounds (${arg('--duration', 3)} s each after 1 s of warm-up, 32 connections, 1 KB deliveries, node:http + \`createNodeListener\`, each server in its own process). Ratio: median of the per-round ratios.`,
    '',
    '| variant | requests/s | ratio |',
    '|---|---:|---:|',
    ...rows,
  ].join('\n');
  if (!process.argv.includes('--no-write')) writeBenchSection('otel-http', section);
  else console.log(section);
}

if (process.argv[2] === '--serve') await serve(process.argv[3] as Variant);
else await main();
