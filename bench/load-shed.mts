/**
 * Shedding load (option `maxInFlight`): a burst of 2,000 concurrent signed deliveries at a real
 * node:http server (our listener, a mail receiver, its memory store), with handlers that do what
 * real ones do: a few ms of awaited I/O and some CPU (a busy loop). Two handlers by default
 * (`--handlers io:cpu,…` in ms): 5 ms of I/O with 0.5 ms of CPU, and with 5 ms of CPU (2,000 of
 * them are 10 s of work: more than the senders wait). For each handler and cap (`--caps`, `false` =
 * no cap) it reports the accepted (200) and shed (503 `overloaded`) deliveries, how many were
 * answered 200 within the senders' 10 s, the p50/p99 latency of the accepted ones as the client
 * saw them (from its request's start to the end of the answer), how long the whole burst took, and
 * the server's event-loop delay during the burst (`monitorEventLoopDelay`, 1 ms resolution).
 *
 * Each server runs in its own child process (the built package, as users install it); the client
 * runs in this one, over 2,000 keep-alive connections opened before the first burst (kept between
 * bursts), so a burst measures the requests and not 2,000 TCP handshakes (`--new-connections`
 * opens one per request instead: then connection set-up costs both processes more than the
 * handlers do). Rounds alternate the caps; each cell is the median of the rounds.
 *
 *   npx tsx bench/load-shed.mts [--rounds 3] [--burst 2000] [--caps false,1024,512,256,128,64]
 *     [--handlers 5:0.5,5:5] [--new-connections] [--no-write]
 * (a run with other than the default burst, caps, handlers or connections never writes docs/benchmarks.md)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import { cpus, loadavg, totalmem } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildDist } from '../test/package/dist.js';
import { writeBenchSection } from './docs-section.mjs';
import { deliveryHeaders, mailBody, median, signatureOf } from './support.mjs';

const SECRET = 'whsec_bench_0123456789abcdef';
const DEFAULT_CAPS = 'false,1024,512,256,128,64';
const DEFAULT_HANDLERS = '5:0.5,5:5';
/** The senders' window (email-service §6 rule 3, crm-service §6 rule 4). */
const WINDOW_MS = 10_000;
const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : process.argv[i + 1]!;
};

if (process.argv[2] === '--serve') await serve();
else await main();

/** What a server reports of one burst. */
interface LagReport {
  p50: number;
  p99: number;
  max: number;
  /** Connections the server accepted during the burst (0 once the keep-alive ones are open). */
  connections: number;
}

/** Child: one receiver with the cap of argv[3] behind our node listener; lag per burst over IPC. */
async function serve(): Promise<void> {
  const cap = process.argv[3]!;
  const ioMs = Number(process.argv[4]);
  const cpuMs = Number(process.argv[5]);
  const dist = process.env.SVC_BENCH_DIST!;
  const { createMailReceiver } = (await import(
    pathToFileURL(`${dist}/index.js`).href
  )) as typeof import('../src/index.js');
  const { createNodeListener } = (await import(
    pathToFileURL(`${dist}/node.js`).href
  )) as typeof import('../src/adapters/node/index.js');
  const receiver = createMailReceiver({
    secret: SECRET,
    maxInFlight: cap === 'false' ? false : Number(cap),
    logger: false,
  }).onAny(async () => {
    await sleep(ioMs); // the handler's awaited I/O: a database write, an API call
    const until = performance.now() + cpuMs; // and its CPU: mapping, serialising, an ORM
    while (performance.now() < until);
  });
  const server = createServer(createNodeListener(receiver));
  // The keep-alive connections stay open while the other caps' servers take their turns.
  server.keepAliveTimeout = 600_000;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const lag = monitorEventLoopDelay({ resolution: 1 });
  process.on('message', (message: string) => {
    if (message === 'start') {
      connections = 0;
      lag.reset();
      lag.enable();
      process.send!('started');
    } else if (message === 'stop') {
      lag.disable();
      const ms = (ns: number) => ns / 1e6;
      const { percentile, max } = lag;
      process.send!({
        p50: ms(percentile.call(lag, 50)),
        p99: ms(percentile.call(lag, 99)),
        max: ms(max),
        connections,
      });
    }
  });
  process.send!({ port: (server.address() as { port: number }).port });
}

/** One burst's figures, as the client saw them. */
interface Burst {
  accepted: number;
  /** Answered 200 within the senders' 10 s. */
  inWindow: number;
  shed: number;
  /** Anything else: 503 handler_timeout past the handler budget, a refused connection. */
  other: number;
  p50: number;
  p99: number;
  durationMs: number;
  lag: LagReport;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** `n` concurrent deliveries over `agent` (false: each on a new connection); latency per accepted one. */
function fire(port: number, n: number, agent: Agent | false): Promise<Omit<Burst, 'lag'>> {
  const body = mailBody(1024);
  const sig = signatureOf(body, SECRET);
  const latencies: number[] = [];
  let shed = 0;
  let other = 0;
  const started = performance.now();
  const one = () =>
    new Promise<void>((resolve) => {
      const at = performance.now();
      const req = request(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/',
          agent,
          headers: { ...deliveryHeaders('mail', randomUUID(), sig), 'content-length': body.length },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.once('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - at);
            else if (res.statusCode === 503 && text.includes('"overloaded"')) shed++;
            else other++;
            resolve();
          });
        },
      );
      req.once('error', () => {
        other++;
        resolve();
      });
      req.end(body);
    });
  return Promise.all(Array.from({ length: n }, one)).then(() => {
    latencies.sort((a, b) => a - b);
    return {
      accepted: latencies.length,
      inWindow: latencies.filter((ms) => ms < WINDOW_MS).length,
      shed,
      other,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      durationMs: performance.now() - started,
    };
  });
}

/** A server child's handle: its port, and one message exchange at a time. */
interface Server {
  child: ChildProcess;
  port: number;
  agent: Agent | false;
  ask(message: string): Promise<unknown>;
}

async function start(
  cap: string,
  ioMs: string,
  cpuMs: string,
  dist: string,
  agent: Agent | false,
): Promise<Server> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', cap, ioMs, cpuMs], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SVC_BENCH_DIST: dist },
  });
  const next = () => new Promise<unknown>((resolve) => child.once('message', resolve));
  const { port } = (await next()) as { port: number };
  return {
    child,
    port,
    agent,
    ask: (message) => {
      const answer = next();
      child.send(message);
      return answer;
    },
  };
}

async function burst(server: Server, n: number): Promise<Burst> {
  await server.ask('start');
  const client = await fire(server.port, n, server.agent);
  const lag = (await server.ask('stop')) as LagReport;
  return { ...client, lag };
}

async function main(): Promise<void> {
  const rounds = Number(option('--rounds', '3'));
  const n = Number(option('--burst', '2000'));
  const capsOption = option('--caps', DEFAULT_CAPS);
  const handlersOption = option('--handlers', DEFAULT_HANDLERS);
  const caps = capsOption.split(',');
  const handlers = handlersOption.split(',').map((pair) => pair.split(':') as [string, string]);
  const fresh = process.argv.includes('--new-connections');
  const standard = n === 2000 && capsOption === DEFAULT_CAPS && handlersOption === DEFAULT_HANDLERS && !fresh;
  const dist = await buildDist();
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const load = loadavg()[0]!.toFixed(1);
  const sections: string[] = [];
  for (const [ioMs, cpuMs] of handlers) {
    const servers = new Map<string, Server>();
    for (const cap of caps) {
      const agent = fresh ? false : new Agent({ keepAlive: true, maxSockets: n, maxFreeSockets: n });
      servers.set(cap, await start(cap, ioMs, cpuMs, dist, agent));
    }
    // Warm-up (the JIT); the first burst also opens the keep-alive connections the next ones reuse.
    for (const server of servers.values()) {
      await fire(server.port, n, server.agent);
      for (let i = 0; i < 3; i++) await fire(server.port, 300, server.agent);
    }
    const results = new Map<string, Burst[]>(caps.map((cap) => [cap, []]));
    for (let round = 0; round < rounds; round++) {
      for (const cap of caps) {
        await sleep(500);
        const result = await burst(servers.get(cap)!, n);
        results.get(cap)!.push(result);
        console.log(
          `handler ${ioMs}:${cpuMs} round ${round + 1} cap ${cap}: ${result.accepted} accepted (${result.inWindow} within 10 s), ${result.shed} shed, ${result.other} other; accepted p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms; burst ${result.durationMs.toFixed(0)} ms; loop delay p99 ${result.lag.p99.toFixed(1)} ms, max ${result.lag.max.toFixed(1)} ms; ${result.lag.connections} new connections`,
        );
      }
    }
    for (const server of servers.values()) server.child.kill();
    const rows = caps.map((cap) => {
      const r = results.get(cap)!;
      const of = (pick: (b: Burst) => number, digits = 0) => median(r.map(pick)).toFixed(digits);
      return `| ${cap === 'false' ? 'none (`false`)' : cap} | ${of((b) => b.accepted)} | ${of((b) => b.inWindow)} | ${of((b) => b.shed)} | ${of((b) => b.other)} | ${of((b) => b.p50)} | ${of((b) => b.p99)} | ${of((b) => b.durationMs)} | ${of((b) => b.lag.p99, 1)} | ${of((b) => b.lag.max, 1)} |`;
    });
    const table = [
      `Handler: ${ioMs} ms awaited, then ${cpuMs} ms of CPU.`,
      '',
      '| `maxInFlight` | accepted (200) | 200 within 10 s | shed (503 `overloaded`) | other | accepted p50, ms | accepted p99, ms | whole burst, ms | event-loop delay p99, ms | max, ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
    ].join('\n');
    console.log(`\n${machine}\n${table}\n`);
    sections.push(table);
  }
  if (!standard || process.argv.includes('--no-write')) return;
  writeBenchSection(
    'load-shed',
    [
      '## Shedding load: a burst of 2,000 (`bench/load-shed.mts`)',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}, shared with other work (load average ${load} at the start). ${n.toLocaleString('en-US')} concurrent signed 1 KB`,
      'deliveries over as many keep-alive connections (opened before, kept between bursts) at our node:http',
      'listener in a child process (the built package, a mail receiver, its memory store, the default',
      '`timeoutMs` of 9 s). The client runs in the parent process on the same two cores. Median of',
      `${rounds} rounds alternating the caps, after a warm-up of each server; latencies of the accepted`,
      "deliveries as the client saw them; the server's event-loop delay during the burst",
      '(`monitorEventLoopDelay`, 1 ms resolution). "other" is 503 `handler_timeout`: handlers that were',
      'still running at the 9 s budget.',
      '',
      sections.join('\n\n'),
    ].join('\n'),
  );
}
