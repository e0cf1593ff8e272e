import type { IncomingMessage, ServerResponse } from 'node:http';
import { startServer } from '../../testing/support/servers.js';

type Handle = (request: Request) => Promise<Response | undefined>;

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  return new Request(`${origin}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) res.setHeader(name, value);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/**
 * A real HTTP server on 127.0.0.1:0 serving an emulated management API (`createMailApi` /
 * `createCrmApi`'s `handle`), created once the server's URL (its `baseUrl`) is known. Unserved
 * routes answer 404 `{ error: { code: 'route_not_found' } }`.
 */
export async function startApiServer(create: (baseUrl: string) => { handle: Handle }) {
  const server = await startServer();
  const api = create(server.url);
  server.use((req, res) => {
    void (async () => {
      const response = await api.handle(await toRequest(req, server.url));
      await send(
        res,
        response ??
          Response.json({ error: { code: 'route_not_found', message: 'No such route.' } }, { status: 404 }),
      );
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  return { url: server.url, close: server.close };
}
