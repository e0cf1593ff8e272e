// The application every runtime of the runtime suite serves (test/runtimes/run.mts): both receivers
// through @svc/webhooks/fetch, created in global scope as a Worker module would, plus three routes
// the suite reads. Plain JavaScript importing the BUILT package, so Node 20 runs it as it is.
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createFetchHandler } from '@svc/webhooks/fetch';
import { verifySignature, verifySignatureSync } from '@svc/webhooks/verify';
// Written by run.mts from its SETTINGS: the secrets and limits the suite signs and checks with.
import settings from './settings.mjs';

const { mailSecret, crmSecret, maxBodyBytes, timeoutMs, leaseMs, slowTo, slowMs } = settings;

const runs = new Map();
const count = (deliveryId) => runs.set(deliveryId, (runs.get(deliveryId) ?? 0) + 1);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A mail delivery to `slowTo` has a handler that outlives its deadline (timeoutMs) by far. The receivers'
// own warnings are off (`logger: false`): the stderr check is for what the runtime prints.
const mail = createMailReceiver({
  secret: mailSecret,
  maxBodyBytes,
  timeoutMs,
  leaseMs,
  logger: false,
}).onAny(async (event, { deliveryId }) => {
  if (event.payload.to === slowTo) await sleep(slowMs);
  count(deliveryId);
});
const crm = createCrmReceiver({ secret: crmSecret, logger: false }).onAny((_event, { deliveryId }) => {
  count(deliveryId);
});
const webhooks = createFetchHandler({ '/webhooks/mail': mail, '/webhooks/crm': crm });

function runtime() {
  if (typeof Bun !== 'undefined') return { name: 'bun', version: Bun.version };
  if (typeof Deno !== 'undefined') return { name: 'deno', version: Deno.version.deno };
  if (globalThis.navigator?.userAgent === 'Cloudflare-Workers') return { name: 'workerd', version: '' };
  return { name: 'node', version: process.versions.node };
}

function hasNodeCrypto() {
  try {
    verifySignatureSync('x', `sha256=${'0'.repeat(64)}`, mailSecret);
    return true;
  } catch (error) {
    if (error?.code === 'crypto_unavailable') return false;
    throw error;
  }
}

async function verifyRoute(request) {
  const body = new Uint8Array(await request.arrayBuffer());
  const signature = request.headers.get('x-signature');
  const rotated = await verifySignature(body, signature, [`${mailSecret}_old`, mailSecret]);
  const changed = body.slice();
  changed[0] ^= 1;
  const tampered = await verifySignature(changed, signature, mailSecret);
  return Response.json({ rotated, tampered: tampered.ok ? 'verified' : tampered.code });
}

const json = (value) => Response.json(value);

export default {
  fetch(request, env, ctx) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === '/info')
      return json({
        ...runtime(),
        nodeCrypto: hasNodeCrypto(),
        process: typeof process,
        dedupKeys: mail.dedup.size + crm.dedup.size,
      });
    if (pathname === '/runs') return json({ runs: runs.get(searchParams.get('id')) ?? 0 });
    if (pathname === '/verify') return verifyRoute(request);
    return webhooks(request, env, ctx);
  },
};
