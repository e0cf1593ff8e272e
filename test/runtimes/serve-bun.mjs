// Bun: test/runtimes/app.mjs served by Bun.serve.
import app from './app.mjs';

const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => app.fetch(request) });
console.log(`listening ${server.port}`);
