// Deno: test/runtimes/app.mjs served by Deno.serve.
import app from './app.mjs';

Deno.serve(
  { hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(`listening ${port}`) },
  (request) => app.fetch(request),
);
