import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist } from '../package/dist.js';
import { type NoNodeCryptoScripts, withoutNodeCrypto } from '../support/without-node-crypto.js';
import { GITHUB } from './support.js';

const CHECK = `
const { payload, secret, signature } = ${JSON.stringify(GITHUB)};
const blocked = [];
for (const id of ['node:crypto', 'crypto']) {
  try { await load(id); } catch { blocked.push(id); }
}
const verify = await load(process.argv[2]);
const ok = await verify.verifySignature(new TextEncoder().encode(payload), signature, secret);
const fromString = await verify.verifySignature(payload, signature, [secret + 'x', secret]);
const changed = await verify.verifySignature('Hello, World?', signature, secret);
const signed = await verify.signPayload(payload, secret);
let sync = 'did not throw';
try { verify.verifySignatureSync(payload, signature, secret); } catch (error) { sync = error.code; }
console.log(JSON.stringify({ getBuiltinModule: typeof process.getBuiltinModule, blocked, ok, fromString, changed: changed.code, signed, sync }));
`;

let dist: string;
let scripts: NoNodeCryptoScripts | undefined;
beforeAll(async () => {
  dist = await buildDist();
  scripts = withoutNodeCrypto('svc-no-node-crypto-', {
    'check.mjs': `const load = (id) => import(id);\n${CHECK}`,
    'check.cjs': `const load = async (id) => require(id);\n(async () => {\n${CHECK}\n})().catch((e) => { console.error(e); process.exit(1); });`,
  });
});
afterAll(() => scripts?.close());

describe.each([
  ['dist/verify.js', 'check.mjs', 'verify.js'],
  ['dist/verify.cjs', 'check.cjs', 'verify.cjs'],
])('%s without node:crypto', (_label, script, file) => {
  it('verifies and signs the GitHub vector with Web Crypto alone', () => {
    const target = script.endsWith('.mjs') ? pathToFileURL(join(dist, file)).href : join(dist, file);
    const child = scripts!.run(script, [target]);
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      getBuiltinModule: 'undefined',
      blocked: ['node:crypto', 'crypto'],
      ok: { ok: true, secretIndex: 0 },
      fromString: { ok: true, secretIndex: 1 },
      changed: 'signature_mismatch',
      signed: GITHUB.signature,
      // Proves the Node path was not taken: the sync variants need node:crypto.
      sync: 'crypto_unavailable',
    });
  });
});
