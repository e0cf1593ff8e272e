// Node: test/runtimes/app.mjs behind a node:http server that turns each request into a web Request
// (body streamed, signal aborted when the client goes away) and writes the Response back. With
// --web-crypto-only, node:crypto is out of reach first (as on edge runtimes): the library finds it
// only through process.getBuiltinModule, and where Node has module.registerHooks (22.15+) an
// import of it throws too.
import { createServer } from 'node:http';
import * as nodeModule from 'node:module';

if (process.argv.includes('--web-crypto-only')) {
  nodeModule.registerHooks?.({
    resolve(specifier, context, nextResolve) {
      if (specifier === 'node:crypto' || specifier === 'crypto') throw new Error(`blocked: ${specifier}`);
      return nextResolve(specifier, context);
    },
  });
  delete process.getBuiltinModule;
}

const { default: app } = await import('./app.mjs');

const server = createServer(async (req, res) => {
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const one of Array.isArray(value) ? value : [value])
      if (one !== undefined) headers.append(name, one);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers,
    body: hasBody ? bodyStream(req) : null,
    duplex: 'half',
    signal: controller.signal,
  });
  try {
    const response = await app.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    res.writeHead(500).end(String(error));
  }
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));

/** The request body as a web stream; cancelling it (a 413) drains the rest instead of resetting. */
function bodyStream(req) {
  let cancelled = false;
  return new ReadableStream({
    start(controller) {
      req.on('data', (chunk) => controller.enqueue(new Uint8Array(chunk)));
      req.once('end', () => cancelled || controller.close());
      req.once('error', (error) => cancelled || controller.error(error));
    },
    cancel() {
      cancelled = true;
      req.removeAllListeners('data');
      req.resume();
    },
  });
}
