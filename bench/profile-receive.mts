/**
 * Where `receiver.receive` spends its time: a CPU profile (node:inspector) of a tight loop of 2 KB
 * deliveries through the built package, summed by self time per function and per file.
 *
 *   npx tsx bench/profile-receive.mts [--size 2048] [--seconds 3]
 */
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildDist } from '../test/package/dist.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const size = arg('--size', 2048);
const seconds = arg('--seconds', 3);
const dist = await buildDist();
const { createMailReceiver } = (await import(
  pathToFileURL(join(dist, 'index.js')).href
)) as typeof import('../src/index.js');

const secret = 'whsec_bench_2f4b8c1d9e';
const base = {
  event: 'delivered',
  client_id: 'cl_8f2a',
  message_id: 'msg_1',
  to: 'ana@example.com',
  provider: 'gmail',
  response: '',
  latency_ms: 412,
  timestamp: '2026-11-22T18:00:00.000Z',
};
base.response = 'x'.repeat(Math.max(0, size - Buffer.byteLength(JSON.stringify(base))));
const body = Buffer.from(JSON.stringify(base));
const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const receiver = createMailReceiver({ secret });
receiver.onAny(() => {});
let n = 0;
const once = () =>
  receiver.receive({
    body,
    headers: { 'x-svcmail-sig': sig, 'x-svcmail-event': 'delivered', 'x-svcmail-id': `dlv_${++n}` },
  });
for (let i = 0; i < 20_000; i++) await once(); // warm-up

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const end = Date.now() + seconds * 1000;
while (Date.now() < end) for (let i = 0; i < 64; i++) await once();
const { profile } = await session.post('Profiler.stop');
session.disconnect();

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
};
const nodes = profile.nodes as Node[];
const total = nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const short = (url: string) => {
  if (url === '') return '(native / V8)';
  if (url.includes('/zod/')) return 'zod';
  if (url.includes(dist)) return `@svc/webhooks ${url.slice(url.lastIndexOf('/') + 1)}`;
  return url.replace(/^.*node_modules\//, '').replace(/^node:/, 'node:');
};
for (const node of nodes) {
  const hits = node.hitCount ?? 0;
  if (hits === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const file = short(url);
  const fn = `${functionName || '(anonymous)'} ${file}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  byFile.set(file, (byFile.get(file) ?? 0) + hits);
}
const top = (map: Map<string, number>, count: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, hits]) => `| ${((hits / total) * 100).toFixed(1)}% | ${name.replaceAll('|', '\\|')} |`);
console.log(`${n} deliveries of ${size} B; ${total} samples of self time\n`);
console.log('| self | by file or area |\n|---:|---|');
console.log(top(byFile, 12).join('\n'));
console.log('\n| self | by function |\n|---:|---|');
console.log(top(byFunction, 25).join('\n'));
