// Shared by check.mjs (ESM `import`) and check.cjs (`require`): loads every subpath of the installed
// tarball and prints one line per check, `ok <name>` or `FAIL <name>: <why>`, for .ci/run to count.
'use strict';

const GITHUB = {
  secret: "It's a Secret to Everybody",
  payload: 'Hello, World!',
  signature: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
};

async function runChecks(format, load, subpaths) {
  const label = `node ${process.versions.node} ${format}`;
  const results = [];
  const check = async (name, fn) => {
    try {
      const detail = await fn();
      results.push(`ok ${label} ${name}${detail ? ` (${detail})` : ''}`);
    } catch (error) {
      results.push(`FAIL ${label} ${name}: ${String(error?.stack ?? error).split('\n').slice(0, 3).join(' | ')}`);
    }
  };
  const modules = {};
  for (const subpath of subpaths) {
    const id = subpath === '.' ? '@svc/webhooks' : `@svc/webhooks/${subpath}`;
    await check(`load ${id}`, async () => {
      const mod = await load(id);
      const names = Object.keys(mod).filter((key) => key !== 'default' && key !== '__esModule');
      if (names.length === 0) throw new Error('no exports');
      const missing = names.filter((key) => mod[key] === undefined);
      if (missing.length > 0) throw new Error(`undefined exports: ${missing.join(', ')}`);
      modules[subpath] = mod;
      return `${names.length} exports`;
    });
  }
  for (const subpath of ['verify'].filter((subpath) => subpaths.includes(subpath))) {
    await check(`${subpath} verifySignature verifies the GitHub vector`, async () => {
      const { verifySignature, verifySignatureSync, signPayload } = modules[subpath];
      const body = new TextEncoder().encode(GITHUB.payload);
      const ok = await verifySignature(body, GITHUB.signature, GITHUB.secret);
      if (!ok.ok || ok.secretIndex !== 0) throw new Error(JSON.stringify(ok));
      const sync = verifySignatureSync(body, GITHUB.signature, [`${GITHUB.secret}!`, GITHUB.secret]);
      if (!sync.ok || sync.secretIndex !== 1) throw new Error(JSON.stringify(sync));
      const bad = await verifySignature('Hello, World?', GITHUB.signature, GITHUB.secret);
      if (bad.ok || bad.code !== 'signature_mismatch') throw new Error(JSON.stringify(bad));
      if ((await signPayload(GITHUB.payload, GITHUB.secret)) !== GITHUB.signature) throw new Error('signPayload');
    });
  }
  if (subpaths.includes('testing')) {
    // The testing kit works without msw: its management API as a plain Request => Response function.
    await check('testing serves the mocked email API without msw', async () => {
      const { createMailApi, createMailEmitter, MAIL_TEST_API_KEY } = modules.testing;
      const emitter = createMailEmitter({ handler: () => new Response(null, { status: 200 }) });
      const api = createMailApi(emitter);
      const response = await api.handle(
        new Request('https://api.svcmail.test/api/v1/webhooks', {
          method: 'POST',
          headers: { 'X-API-Key': MAIL_TEST_API_KEY, 'Content-Type': 'application/json' },
          body: JSON.stringify({ url: 'https://hooks.example.com/mail', events: ['bounced'] }),
        }),
      );
      if (response?.status !== 201) throw new Error(`POST /api/v1/webhooks: ${response?.status}`);
      if (emitter.listWebhooks().length !== 1) throw new Error('emitter state');
      return `${response.status}`;
    });
  }
  if (!subpaths.includes('.')) return results;
  await check('WebhookError is one class across subpaths', async () => {
    const classes = new Set(Object.values(modules).map((mod) => mod.WebhookError).filter(Boolean));
    if (classes.size !== 1) throw new Error(`${classes.size} WebhookError classes`);
    const [WebhookError] = classes;
    const error = new WebhookError('signature_mismatch', 'x');
    if (error.status !== 401 || !modules['.'].isWebhookError(error)) throw new Error('status/isWebhookError');
  });
  if (modules.manage) {
    await check('manage createMailClient over node:http: a list, then 403 as insufficient_scope', async () => {
      const http = require('node:http');
      const server = http.createServer((req, res) => {
        res.setHeader('Content-Type', 'application/json');
        if (req.method === 'GET') {
          res.end(JSON.stringify({ data: [{ id: 'wh_1', url: 'https://h.example.com', events: ['opened'] }] }));
        } else {
          res.statusCode = 403;
          res.end(JSON.stringify({ error: { code: 'insufficient_scope', message: 'Needs admin.' } }));
        }
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { createMailClient } = modules.manage;
        const mail = createMailClient({ baseUrl: `http://127.0.0.1:${server.address().port}`, apiKey: 'zm_live_x' });
        const hooks = await mail.listWebhooks();
        if (hooks.length !== 1 || hooks[0].id !== 'wh_1') throw new Error(JSON.stringify(hooks));
        const error = await mail.createWebhook({ url: 'https://h.example.com', events: ['opened'] }).catch((e) => e);
        if (!modules['.'].isWebhookError(error) || error.code !== 'insufficient_scope' || error.status !== 403) {
          throw new Error(String(error));
        }
      } finally {
        server.closeAllConnections?.();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  }
  return results;
}

module.exports = { runChecks };
