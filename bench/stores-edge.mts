/**
 * The edge and serverless dedup stores, measured on their local engines: round trips and latency of
 * one claim, one complete, and the claim of a completed key (a duplicate), sequential, one call at a
 * time. D1 runs inside workerd (miniflare): the store is bundled from src/ into a Worker that times
 * its own calls against its D1 binding, as a deployed Worker calls D1 (miniflare's Node proxy would
 * time the proxy instead). DynamoDB runs in Node against dynalite in its own process; round trips are
 * the requests the `DynamoDBClient` sent. Local engines: these numbers rank the stores' own work and
 * round trips, not the network to a real D1 primary or DynamoDB endpoint (add its round-trip time
 * per request). Writes its section of docs/benchmarks.md.
 *
 *   npx tsx bench/stores-edge.mts [N]    (N deliveries per store, default 300)
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { createDynamoDBStore } from '../src/dedup/dynamodb.js';
import { createDedupTable, startDynalite } from '../test/support/dynalite-server.js';
import { writeBenchSection } from './docs-section.mjs';

const N = Number(process.argv[2] ?? 300);
const root = fileURLToPath(new URL('..', import.meta.url));

type Timings = { claim: number[]; complete: number[]; duplicate: number[] };
type Trips = { claim: number; complete: number; duplicate: number };

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);

// --- D1, inside workerd -----------------------------------------------------------------------
const WORKER = `
import { createD1Store } from ${JSON.stringify(join(root, 'src/dedup/d1.ts'))};
export default {
  async fetch(request, env) {
    const n = Number(new URL(request.url).searchParams.get('n'));
    // Counts the calls that reach D1 (a batch, or one statement's all/run/first): its round trips.
    let calls = 0;
    const counted = (statement) => ({
      inner: statement,
      bind: (...values) => counted(statement.bind(...values)),
      all: () => (calls++, statement.all()),
      run: () => (calls++, statement.run()),
      first: () => (calls++, statement.first()),
    });
    const database = {
      prepare: (sql) => counted(env.DB.prepare(sql)),
      batch: (statements) => (calls++, env.DB.batch(statements.map((s) => s.inner))),
    };
    const store = createD1Store({ database });
    await store.migrate();
    const t = { claim: [], complete: [], duplicate: [] };
    const trips = { claim: 0, complete: 0, duplicate: 0 };
    const time = async (which, work) => {
      const before = calls;
      const start = performance.now();
      const out = await work();
      t[which].push(performance.now() - start);
      trips[which] += calls - before;
      return out;
    };
    for (let i = 0; i < 20; i++) await store.claim('warm:' + i, { leaseMs: 30000 });
    for (let i = 0; i < n; i++) {
      const key = 'mail:delivery:' + i;
      const claim = await time('claim', () => store.claim(key, { leaseMs: 30000 }));
      await time('complete', () => store.complete(key, claim.token, { ttlMs: 86400000 }));
      await time('duplicate', () => store.claim(key, { leaseMs: 30000 }));
    }
    for (const which in trips) trips[which] /= n;
    return Response.json({ timings: t, trips });
  },
};`;

async function d1(): Promise<{ timings: Timings; trips: Trips }> {
  const bundle = await build({
    stdin: { contents: WORKER, resolveDir: root, loader: 'ts', sourcefile: 'bench-worker.ts' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]!.text,
    compatibilityDate: '2025-06-01',
    d1Databases: ['DB'],
  });
  try {
    const response = await mf.dispatchFetch(`http://bench/?n=${N}`);
    if (!response.ok) throw new Error(`D1 bench worker: ${response.status} ${await response.text()}`);
    return (await response.json()) as { timings: Timings; trips: Trips };
  } finally {
    await mf.dispose();
  }
}

// --- DynamoDB, against dynalite -----------------------------------------------------------------
async function dynamodb(): Promise<{ timings: Timings; trips: Trips }> {
  const server = await startDynalite();
  try {
    const client: DynamoDBClient = server.client();
    let requests = 0;
    client.middlewareStack.add(
      (next) => (args) => {
        requests++;
        return next(args);
      },
      { step: 'finalizeRequest', name: 'countRequests', priority: 'low' },
    );
    await createDedupTable(client, 'webhook_dedup');
    const store = createDynamoDBStore({ client });
    for (let i = 0; i < 20; i++) await store.claim(`warm:${i}`, { leaseMs: 30_000 });
    const t: Timings = { claim: [], complete: [], duplicate: [] };
    const counted = { claim: 0, complete: 0, duplicate: 0 };
    const time = async <T,>(which: keyof Timings, work: () => Promise<T>): Promise<T> => {
      const before = requests;
      const start = performance.now();
      const out = await work();
      t[which].push(performance.now() - start);
      counted[which] += requests - before;
      return out;
    };
    for (let i = 0; i < N; i++) {
      const key = `mail:delivery:${i}`;
      const claim = await time('claim', () => store.claim(key, { leaseMs: 30_000 }));
      if (claim.status !== 'claimed') throw new Error('not claimed');
      await time('complete', () => store.complete(key, claim.token, { ttlMs: 86_400_000 }));
      await time('duplicate', () => store.claim(key, { leaseMs: 30_000 }));
    }
    return {
      timings: t,
      trips: { claim: counted.claim / N, complete: counted.complete / N, duplicate: counted.duplicate / N },
    };
  } finally {
    await server.close();
  }
}

const rows: string[] = [];
for (const [name, run] of [
  ['D1 (`./d1`), miniflare, timed inside workerd', d1],
  ['DynamoDB (`./dynamodb`), dynalite, timed in Node', dynamodb],
] as const) {
  const { timings, trips } = await run();
  const pairs = timings.claim.map((c, i) => c + timings.complete[i]!);
  const row = [
    name,
    `${trips.claim} / ${trips.complete} / ${trips.duplicate}`,
    `${ms(quantile(timings.claim, 0.5))} / ${ms(quantile(timings.claim, 0.99))}`,
    `${ms(quantile(timings.complete, 0.5))} / ${ms(quantile(timings.complete, 0.99))}`,
    `${ms(quantile(timings.duplicate, 0.5))} / ${ms(quantile(timings.duplicate, 0.99))}`,
    ms(quantile(pairs, 0.5)),
  ];
  console.log(row.join(' | '));
  rows.push(`| ${row.join(' | ')} |`);
}

writeBenchSection(
  'stores-edge',
  `### Edge and serverless dedup stores (\`bench/stores-edge.mts\`)

Node ${process.versions.node}, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the end of the run; ${N}
deliveries per store, one call at a time, on local engines (no network to a real D1 primary or
DynamoDB endpoint: add its round-trip time per round trip). Latency in ms, p50 / p99; workerd's
clock advances in whole milliseconds (it only moves across I/O), so the D1 figures are rounded to it.

| Store, engine | Round trips: claim / complete / duplicate claim | claim | complete | duplicate claim | claim + complete, p50 |
| --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

- **D1**: a claim is one batch (the \`INSERT … ON CONFLICT … RETURNING\` and a read of the row, one
  transaction), so a new key and a duplicate cost the same one call; complete is one statement.
- **DynamoDB**: a claim of a free key is one conditional \`PutItem\`; a duplicate is the refused
  \`PutItem\` and a strongly consistent \`GetItem\` (2 requests); complete is one conditional \`UpdateItem\`.`,
);
