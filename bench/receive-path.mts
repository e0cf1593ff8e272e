/**
 * `receiver.receive` against the raw ceiling, in one run and interleaved rounds: the receiver as
 * built now, the same receiver on its asynchronous path (a store it cannot see is synchronous and an
 * async handler), a plain `async` receiver written from the public parts, and, with `--baseline`, the
 * receiver of an earlier build (before the receive path was rewritten), all under the same load.
 *
 *   npx tsx bench/receive-path.mts [--baseline /path/to/earlier/dist] [--dry-run]
 */
import { Buffer } from 'node:buffer';
import { timingSafeEqual } from 'node:crypto';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildDist } from '../test/package/dist.js';
import { writeBenchSection } from './docs-section.mjs';
import { mailBody, measure, median, ratioTable, signatureOf } from './support.mjs';

type Index = typeof import('../src/index.js');
const load = async (dir: string): Promise<Index> =>
  (await import(pathToFileURL(join(dir, 'index.js')).href)) as Index;
// The package as users install it (the tsup build), not the sources through tsx.
const ours = await load(await buildDist());
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt === -1 ? undefined : await load(process.argv[baselineAt + 1]!);

const SIZES: Array<[label: string, bytes: number]> = [
  ['200 B', 200],
  ['2 KB', 2 * 1024],
];
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const ROUND_MS = 200;
const WARMUP_MS = 300;
const secret = 'whsec_bench_2f4b8c1d9e';

type Contender = { name: string; run: () => unknown };

function contenders(body: Buffer): Contender[] {
  const header = signatureOf(body, secret);
  const mailHeaders = { 'x-svcmail-sig': header, 'x-svcmail-event': 'delivered', 'x-svcmail-id': 'dlv_1' };
  let deliveries = 0;
  const headers = () => ({ ...mailHeaders, 'x-svcmail-id': `dlv_${++deliveries}` });
  // A verdict (`kind: 'handled'`), or the outcome of a --baseline build from before verdicts.
  const processed = (label: string) => (outcome: { kind?: string; result?: string; code?: string }) => {
    if (outcome.kind !== 'handled' && outcome.result !== 'processed')
      throw new Error(`${label}: ${outcome.code}`);
  };

  const receiver = ours.createMailReceiver({ secret });
  receiver.onAny(() => {});
  const before = baseline?.createMailReceiver({ secret });
  before?.onAny(() => {});

  // The same receiver over a memory store it cannot see through: every store call is a promise bounded
  // by storeTimeoutMs, as with any store of your own, and the handler is async (deadline timer).
  const hidden = ours.createMemoryStore();
  const asyncPath = ours.createMailReceiver({
    secret,
    dedup: {
      claim: (key, options) => hidden.claim(key, options),
      complete: (key, token, options) => hidden.complete(key, token, options),
      release: (key, token) => hidden.release(key, token),
      abandon: (key, token, options) => hidden.abandon(key, token, options),
    },
  });
  asyncPath.onAny(async () => {});

  // verify + parse + validate, claim, handler, complete, each awaited: `receive` written as plain
  // async code from the public parts (no deadline timer, no outcome object: a little less work).
  const plainStore = ours.createMemoryStore();
  const plainHandler = async (_event: unknown) => {};

  return [
    {
      // The floor any verifier pays: header shape check, one HMAC, a constant-time compare, JSON.parse.
      name: 'ceiling: node:crypto + JSON.parse',
      run: () => {
        if (header.length !== 71 || !header.startsWith('sha256=')) throw new Error('malformed');
        const expected = Buffer.from(signatureOf(body, secret));
        if (!timingSafeEqual(expected, Buffer.from(header))) throw new Error('ceiling did not verify');
        return JSON.parse(body.toString('utf8'));
      },
    },
    {
      name: 'receiver.receive (memory store, sync handler)',
      run: () => receiver.receive({ body, headers: headers() }).then(processed('receive')),
    },
    ...(before
      ? [
          {
            name: 'receiver.receive, before (--baseline build)',
            run: () => before.receive({ body, headers: headers() }).then(processed('before')),
          },
        ]
      : []),
    {
      name: 'receiver.receive, async store + async handler',
      run: () => asyncPath.receive({ body, headers: headers() }).then(processed('async path')),
    },
    {
      name: 'plain async: constructMailEvent, await claim/handler/complete',
      run: async () => {
        const event = await ours.constructMailEvent(body, headers(), secret);
        const key = `mail:delivery:${event.deliveryId}`;
        const claim = await plainStore.claim(key, { leaseMs: 30_000 });
        if (claim.status !== 'claimed') throw new Error(`plain async: ${claim.status}`);
        await plainHandler(event);
        await plainStore.complete(key, claim.token, { ttlMs: 86_400_000 });
      },
    },
  ];
}

type Row = { size: string; name: string; opsPerSec: number; ratio: number };
const rows: Row[] = [];
for (const [label, size] of SIZES) {
  const list = contenders(mailBody(size));
  for (const c of list) await c.run();
  for (const c of list) await measure(c.run, WARMUP_MS);
  const ops = new Map<string, number[]>(list.map((c) => [c.name, []]));
  const ratios = new Map<string, number[]>(list.map((c) => [c.name, []]));
  // Rounds interleave contenders; the ratio to the ceiling is taken per round, then its median.
  for (let round = 0; round < ROUNDS; round++) {
    const inRound = new Map<string, number>();
    // Each round starts at another contender, so no one always runs after the same neighbour.
    for (let i = 0; i < list.length; i++) {
      const c = list[(i + round) % list.length]!;
      inRound.set(c.name, await measure(c.run, ROUND_MS));
    }
    const ceiling = inRound.get(list[0]!.name)!;
    for (const [name, value] of inRound) {
      ops.get(name)!.push(value);
      ratios.get(name)!.push(ceiling / value);
    }
  }
  for (const c of list) {
    const row = {
      size: label,
      name: c.name,
      opsPerSec: median(ops.get(c.name)!),
      ratio: median(ratios.get(c.name)!),
    };
    rows.push(row);
    console.log(
      `${label.padEnd(6)} ${c.name.padEnd(64)} ${Math.round(row.opsPerSec).toLocaleString('en-US').padStart(10)} ops/s  ${row.ratio.toFixed(2)}x ceiling time`,
    );
  }
}

const table = ratioTable(
  rows,
  SIZES.map(([l]) => l),
);
const section = [
  '### The receive path (`bench/receive-path.mts`)',
  '',
  `Machine: ${cpus()[0]?.model.trim() ?? 'unknown CPU'} (${cpus().length} vCPU, shared and loaded), Node ${process.version}, run ${new Date().toISOString().slice(0, 10)}.`,
  '',
  `Operations per second (median of ${ROUNDS} interleaved rounds, each starting at another contender, of ${ROUND_MS} ms after a ${WARMUP_MS} ms warm-up) and, in parentheses, the time per`,
  'operation relative to the raw ceiling (node:crypto HMAC + `timingSafeEqual` + `JSON.parse`), the median of the per-round ratios',
  '(the load of this shared machine drifts between rounds far more than within one). Every delivery has a new id, so each one is',
  'verified, parsed, validated, claimed, handled by one no-op handler and completed.',
  '',
  ...table,
  '',
  '- `before`: the receiver built from the commit before the receive path was rewritten (`--baseline`), in the same rounds.',
  '- `async store + async handler`: the same receiver when nothing answers synchronously: a store the receiver cannot see through (each call a promise bounded by `storeTimeoutMs`) and an `async` handler (deadline timer).',
  '- `plain async`: the steps written as plain `async` code from the public parts (`constructMailEvent`, `await` claim, handler, complete); no deadline timer and no outcome object, so it does a little less than `receive`.',
].join('\n');

if (process.argv.includes('--dry-run')) console.log(`\n${section}`);
else writeBenchSection('receive-path', section);
