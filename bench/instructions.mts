/**
 * Instructions per request (or per delivery), counted by Valgrind's callgrind: unlike time, the count
 * barely moves with the load of a shared machine, so it shows whether a change to the receive path
 * pays. The process runs under callgrind with counting off; after a warm-up (JIT) counting is turned
 * on for `--requests` requests only (`callgrind_control`), so start-up never enters the count.
 *
 *   npx tsx bench/instructions.mts http <node|express|fastify|hono> <hmac|ours|octokit|raw> [--requests 6000] [--warm 3000]
 *   npx tsx bench/instructions.mts receive <bytes> <ceiling|receive|fresh|outcome> [--requests 20000] [--warm 20000]
 *   npx tsx bench/instructions.mts garbage <bytes> <ceiling|receive|fresh> [--requests 1000] [--warm 20000]
 *
 * `http` runs a server of bench/adapters-http.mts (1 KB deliveries, `--connections 1` keep-alive);
 * `receive` a tight loop of `receiver.receive` (a memory store of 10,000 keys, full after the warm-up;
 * one no-op handler) or of the raw ceiling (node:crypto HMAC + timingSafeEqual + JSON.parse), as in
 * bench/receive-path.mts; `fresh` sends each delivery to a receiver made before the count that has
 * received nothing yet (what per-receiver closures cost); `outcome` is `receive` with an `onOutcome`
 * that does nothing (the outcome record and its lag, docs/observability.md "Cost"). `garbage` runs the same loop without
 * callgrind and prints the bytes allocated per delivery (`--requests` deliveries a batch). V8 runs `--single-threaded`, so a count repeats to about 0.1%. Needs
 * `valgrind` on the PATH; slow (a minute or two per count). `--cpu-prof DIR` runs the same load under
 * the V8 profiler instead; `--dist DIR` counts another build; `--keep FILE` keeps callgrind's output.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getHeapSpaceStatistics } from 'node:v8';
import { buildDist } from '../test/package/dist.js';
import { countsOf } from './callgrind.mjs';
import { deliveryHeaders, mailBody, signatureOf } from './support.mjs';

const SECRET = 'whsec_bench_0123456789abcdef';
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const [mode, what, scenario] = process.argv.slice(2);

if (mode === '--loop') await loop(Number(what), scenario!);
else if (mode === 'http' || mode === 'receive' || mode === 'garbage') await count();
else throw new Error('usage: see the head of bench/instructions.mts');

/** Child of `receive` and `garbage`: warms up, then runs what the parent asks for on stdin. */
async function loop(size: number, contender: string): Promise<void> {
  const { createMailReceiver, createMemoryStore } = (await import(
    pathToFileURL(join(process.env.SVC_BENCH_DIST!, 'index.js')).href
  )) as typeof import('../src/index.js');
  const body = mailBody(size);
  const header = signatureOf(body, SECRET);
  // A store already full after the warm-up, so the count sees the steady state (each claim evicts the
  // oldest key) rather than a heap that grows, whose major collections fall in or out of the window.
  const dedup = createMemoryStore({ maxKeys: 10_000 });
  const newReceiver = () => createMailReceiver({ secret: SECRET, dedup }).onAny(() => {});
  const steady =
    contender === 'outcome'
      ? createMailReceiver({ secret: SECRET, dedup, onOutcome: () => {} }).onAny(() => {})
      : newReceiver();
  // `fresh`: every delivery goes to a receiver that has received nothing yet, made before the count
  // (`prepare N`), so the count holds the first delivery of each receiver but not its creation.
  let fresh: ReturnType<typeof newReceiver>[] = [];
  let n = 0;
  const ceiling = () => {
    if (header.length !== 71 || !header.startsWith('sha256=')) throw new Error('malformed');
    if (!timingSafeEqual(Buffer.from(signatureOf(body, SECRET)), Buffer.from(header)))
      throw new Error('ceiling did not verify');
    return JSON.parse(body.toString('utf8'));
  };
  const receive = (receiver: ReturnType<typeof newReceiver>) =>
    receiver
      .receive({
        body,
        headers: { 'x-svcmail-sig': header, 'x-svcmail-event': 'delivered', 'x-svcmail-id': `dlv_${++n}` },
      })
      .then((verdict) => {
        // A build before the verdict (docs/benchmarks.md "before and after") answered an HTTP outcome.
        if (verdict.kind !== 'handled' && (verdict as unknown as { status?: number }).status !== 200)
          throw new Error(`receive: ${'code' in verdict ? verdict.code : verdict.kind}`);
      });
  const run =
    contender === 'ceiling'
      ? ceiling
      : contender === 'fresh'
        ? () => receive(fresh.pop() ?? newReceiver())
        : () => receive(steady);
  const times = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const result = run();
      if (result instanceof Promise) await result;
    }
  };
  const lines = createInterface({ input: process.stdin });
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write('ready\n');
  for await (const line of lines) {
    const [command, value] = line.split(' ');
    if (command === 'prepare') fresh = Array.from({ length: Number(value) }, newReceiver);
    else if (command === 'garbage') process.stdout.write(`${await garbage(Number(value), times)}\n`);
    else await times(Number(command));
    process.stdout.write('done\n');
  }
}

/**
 * Bytes allocated per delivery: the growth of the heap (every space: V8 places objects it expects to
 * live long straight in the old generation) over `batch` deliveries, in a heap whose young generation
 * holds a whole batch and whose old one is not collected; a batch during which a scavenge ran (the
 * young generation shrank) is skipped. The median of 15 batches; counts what a delivery allocates,
 * kept or not, and nothing outside V8's heap.
 */
async function garbage(batch: number, times: (count: number) => Promise<void>): Promise<number> {
  const used = () => {
    let young = 0;
    let all = 0;
    for (const space of getHeapSpaceStatistics()) {
      all += space.space_used_size;
      if (space.space_name === 'new_space') young = space.space_used_size;
    }
    return { young, all };
  };
  const grew: number[] = [];
  for (let tries = 0; grew.length < 15 && tries < 60; tries++) {
    const before = used();
    await times(batch);
    const after = used();
    if (after.young > before.young) grew.push((after.all - before.all) / batch);
  }
  grew.sort((a, b) => a - b);
  if (process.env.DEBUG_GARBAGE) console.error(grew);
  return Math.round(grew[grew.length >> 1]!);
}

/** Starts the child under callgrind, warms it, counts `--requests` of it. */
async function count(): Promise<void> {
  // --dist DIR: count an earlier build (a copy of the tsup output) instead of the current sources.
  const distAt = process.argv.indexOf('--dist');
  const dist = distAt === -1 ? await buildDist() : process.argv[distAt + 1]!;
  const http = mode === 'http';
  const requests = arg('--requests', http ? 6000 : mode === 'garbage' ? 1000 : 20_000);
  const warm = arg('--warm', http ? 3000 : 20_000);
  const out = join(tmpdir(), `svc-instructions-${process.pid}.out`);
  // --cpu-prof DIR: the same run under the V8 profiler instead, for a profile of where the time goes.
  const profileAt = process.argv.indexOf('--cpu-prof');
  const profile = profileAt === -1 ? undefined : process.argv[profileAt + 1];
  const counter = profile
    ? [process.execPath, '--cpu-prof', '--cpu-prof-dir', profile]
    : mode === 'garbage'
      ? // A young generation that holds a whole batch (see garbage()).
        [process.execPath, '--min-semi-space-size=64', '--max-semi-space-size=64', '--no-concurrent-marking']
      : [
          'valgrind',
          '--tool=callgrind',
          '--instr-atstart=no',
          `--callgrind-out-file=${out}`,
          process.execPath,
        ];
  const child = spawn(
    counter[0]!,
    [
      ...counter.slice(1),
      // No background compilation or GC threads, and a heap that grows by fixed rules rather than by
      // measured allocation rates: the JIT and the collector then run at the same points of every run,
      // so a count repeats (otherwise one major GC more or less in the window moves it by 10-30%).
      '--single-threaded',
      // (It also fixes the young generation at a few MB: not for `garbage`, which needs a larger one.)
      ...(mode === 'garbage' ? [] : ['--predictable-gc-schedule']),
      // An old generation that starts large: no major collection (nor the slower write barrier of
      // incremental marking) falls in the warm-up or the counted window, whatever the build
      // allocates; only scavenges run, and the count without the collector leaves them out.
      '--initial-old-space-size=2048',
      '--import',
      'tsx',
      http ? fileURLToPath(new URL('./adapters-http.mts', import.meta.url)) : fileURLToPath(import.meta.url),
      ...(http ? ['--serve', what!, scenario!] : ['--loop', what!, scenario!]),
    ],
    // A memory store full after the warm-up (SVC_BENCH_MAX_KEYS, as in loop()): the steady state.
    {
      stdio: ['pipe', 'pipe', process.env.DEBUG_GARBAGE ? 'inherit' : 'ignore'],
      env: { ...process.env, SVC_BENCH_DIST: dist, SVC_BENCH_MAX_KEYS: '2000' },
    },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = (await lines.next()).value as string;
  const counting = (on: boolean) =>
    execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(child.pid)]);
  if (http) {
    const { port } = JSON.parse(first) as { port: number };
    const send = deliveries(port, scenario === 'octokit' ? 'github' : 'mail', arg('--connections', 1));
    await send(warm);
    counting(true);
    await send(requests);
    counting(false);
  } else {
    const step = async (command: string) => {
      child.stdin!.write(`${command}\n`);
      const answer = (await lines.next()).value as string;
      if (answer !== 'done') await lines.next();
      return answer;
    };
    const fresh = scenario === 'fresh';
    if (fresh) await step(`prepare ${warm}`);
    await step(String(warm));
    if (mode === 'garbage') {
      const bytes = Number(await step(`garbage ${requests}`));
      await stop(child);
      return console.log(
        `garbage ${what} ${scenario}: ${bytes.toLocaleString('en-US')} bytes allocated per delivery`,
      );
    }
    if (fresh) await step(`prepare ${requests}`);
    counting(true);
    await step(String(requests));
    counting(false);
  }
  await stop(child);
  if (profile) return console.log(`profile written to ${profile}`);
  const { total, collector } = countsOf(readFileSync(out, 'utf8'));
  // --keep FILE: keep callgrind's output for callgrind_annotate (native and builtin functions by name).
  const keep = process.argv.indexOf('--keep');
  if (keep === -1) rmSync(out, { force: true });
  else renameSync(out, process.argv[keep + 1]!);
  const per = (n: number) => Math.round(n / requests).toLocaleString('en-US');
  console.log(
    `${mode} ${what} ${scenario}: ${per(total)} instructions per ${http ? 'request' : 'delivery'}, ${per(total - collector)} without the garbage collector (${requests} counted after ${warm})`,
  );
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Sends `n` signed 1 KB deliveries, each with a new id, over `connections` keep-alive connections. One
 * connection (the default) makes every request its own turn of the server's event loop, so the count
 * does not depend on how requests happened to batch.
 */
function deliveries(
  port: number,
  style: 'mail' | 'github',
  connections: number,
): (n: number) => Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const body = mailBody(1024);
  const sig = signatureOf(body, SECRET);
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const id = randomUUID();
      const headers = deliveryHeaders(style, id, sig);
      const req = request(
        { port, host: '127.0.0.1', method: 'POST', path: '/webhooks/mail', agent, headers },
        (res) => {
          if (res.statusCode === undefined || res.statusCode >= 300)
            reject(new Error(`status ${res.statusCode}`));
          res.resume();
          res.once('end', resolve);
        },
      );
      req.once('error', reject);
      req.end(body);
    });
  return async (n) => {
    let sent = 0;
    const worker = async () => {
      while (sent < n) {
        sent++;
        await one();
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
  };
}
