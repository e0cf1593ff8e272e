/**
 * The BUILT root entry where node:crypto cannot be reached (what Web-Crypto-only runtimes have): a
 * hand-off receiver writes a job whose MAC equals the one node:crypto computes (job-mac.ts here), a
 * worker there runs it, and refuses it once a field changed. Node and edge receivers and workers
 * can share one queue.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/core/handoff/types.js';
import { buildDist } from '../package/dist.js';
import { MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { expectedMac } from './job-mac.js';

const PRELOAD = `
import { registerHooks } from 'node:module';
const blocked = new Set(['node:crypto', 'crypto']);
registerHooks({
  resolve(specifier, context, nextResolve) {
    if (blocked.has(specifier)) throw new Error('blocked: ' + specifier);
    return nextResolve(specifier, context);
  },
});
delete process.getBuiltinModule;
`;

const CHECK = `
const lib = await import(process.argv[2]);
const [secret, body, headers] = JSON.parse(process.argv[3]);
const jobs = [];
const handoff = { enqueue: async (job) => { jobs.push(job); return 'enqueued'; } };
const receiver = lib.createMailReceiver({ secret: ['whsec_other_secret_0001', secret], handoff });
const queued = (await receiver.receive({ body: new TextEncoder().encode(body), headers, method: 'POST' })).kind;
const worker = lib.createMailReceiver({ secret }).on('delivered', () => {});
const ran = (await worker.runJob(jobs[0])).kind;
const changed = await worker.runJob({ ...jobs[0], receivedAt: jobs[0].receivedAt + 1 });
console.log(JSON.stringify({ nodeCrypto: typeof process.getBuiltinModule, queued, job: jobs[0], ran, changed: changed.code }));
`;

let dist: string;
let work: string;
beforeAll(async () => {
  dist = await buildDist();
  work = mkdtempSync(join(tmpdir(), 'svc-job-mac-'));
  writeFileSync(join(work, 'preload.mjs'), PRELOAD);
  writeFileSync(join(work, 'check.mjs'), CHECK);
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

it('dist/index.js without node:crypto: the job MAC is the node:crypto one, and the worker checks it', () => {
  const delivery = mailDelivery('delivered');
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      pathToFileURL(join(work, 'preload.mjs')).href,
      join(work, 'check.mjs'),
      pathToFileURL(join(dist, 'index.js')).href,
      JSON.stringify([MAIL_SECRET, new TextDecoder().decode(delivery.body), delivery.headers]),
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );
  expect(child.stderr).toBe('');
  const result = JSON.parse(child.stdout) as {
    nodeCrypto: string;
    queued: string;
    job: HandoffJob;
    ran: string;
    changed: string;
  };
  const { mac, ...rest } = result.job;
  expect(result).toMatchObject({
    nodeCrypto: 'undefined',
    queued: 'queued',
    ran: 'handled',
    changed: 'job_invalid',
  });
  expect(rest.secretIndex).toBe(1);
  expect(mac).toBe(expectedMac(MAIL_SECRET, rest));
});
