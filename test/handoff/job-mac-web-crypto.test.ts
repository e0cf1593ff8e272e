/**
 * The BUILT root entry where node:crypto cannot be reached (what Web-Crypto-only runtimes have): a
 * hand-off receiver writes a job whose MAC equals the one node:crypto computes (job-mac.ts here), a
 * worker there runs it, and refuses it once a field changed. Node and edge receivers and workers
 * can share one queue.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HandoffJob } from '../../src/handoff/job/types.js';
import { buildDist } from '../package/dist.js';
import { MAIL_SECRET, mailDelivery } from '../receivers/support.js';
import { type NoNodeCryptoScripts, withoutNodeCrypto } from '../support/without-node-crypto.js';
import { expectedMac } from './job-mac.js';

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
let scripts: NoNodeCryptoScripts | undefined;
beforeAll(async () => {
  dist = await buildDist();
  scripts = withoutNodeCrypto('svc-job-mac-', { 'check.mjs': CHECK });
});
afterAll(() => scripts?.close());

it('dist/index.js without node:crypto: the job MAC is the node:crypto one, and the worker checks it', () => {
  const delivery = mailDelivery('delivered');
  const child = scripts!.run('check.mjs', [
    pathToFileURL(join(dist, 'index.js')).href,
    JSON.stringify([MAIL_SECRET, new TextDecoder().decode(delivery.body), delivery.headers]),
  ]);
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
