/**
 * The BUILT root entry where node:crypto cannot be reached (what Web-Crypto-only runtimes have): a
 * receiver still claims a huge `message_id` key, and its hashed key equals the one node:crypto gives,
 * so Node and edge instances sharing a store agree. Expected values come from node:crypto here.
 */
import { createHash, createHmac } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildDist } from '../package/dist.js';
import { type NoNodeCryptoScripts, withoutNodeCrypto } from '../support/without-node-crypto.js';

const SECRET = 'whsec_web_crypto_only';
const MESSAGE_ID = `<${'m'.repeat(5_000)}@mail.example>`;
const BODY = JSON.stringify({
  event: 'bounced',
  client_id: 'c_1',
  message_id: MESSAGE_ID,
  to: 'a@b.example',
  provider: 'gmail',
});
const SIGNATURE = `sha256=${createHmac('sha256', SECRET).update(BODY).digest('hex')}`;

const CHECK = `
const lib = await import(process.argv[2]);
const [secret, body, signature, messageId] = JSON.parse(process.argv[3]);
const keys = [];
// A store that records the keys it is asked to claim.
const inner = lib.createMemoryStore();
const dedup = {
  claim: (key, options) => { keys.push(key); return inner.claim(key, options); },
  complete: (...args) => inner.complete(...args),
  release: (...args) => inner.release(...args),
};
const receiver = lib.createMailReceiver({ secret, dedup, dedupKey: 'message-event' }).on('bounced', () => {});
const results = [];
for (const id of ['dlv_1', 'dlv_2']) {
  const headers = { 'x-svcmail-sig': signature, 'x-svcmail-event': 'bounced', 'x-svcmail-id': id };
  results.push((await receiver.receive({ body, headers, method: 'POST' })).kind);
}
console.log(JSON.stringify({ nodeCrypto: typeof process.getBuiltinModule, results, keys }));
`;

let dist: string;
let scripts: NoNodeCryptoScripts | undefined;
beforeAll(async () => {
  dist = await buildDist();
  scripts = withoutNodeCrypto('svc-bound-key-', { 'check.mjs': CHECK });
});
afterAll(() => scripts?.close());

it('dist/index.js without node:crypto: a huge message_id key is hashed to the node:crypto digest', () => {
  const child = scripts!.run('check.mjs', [
    pathToFileURL(join(dist, 'index.js')).href,
    JSON.stringify([SECRET, BODY, SIGNATURE, MESSAGE_ID]),
  ]);
  expect(child.stderr).toBe('');
  const expected = `mail:sha256:${createHash('sha256').update(`mail:message:bounced:${MESSAGE_ID}`).digest('hex')}`;
  expect(JSON.parse(child.stdout)).toEqual({
    nodeCrypto: 'undefined',
    results: ['handled', 'duplicate'],
    keys: [expected, expected],
  });
});
