import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1:0 whose request listener can be swapped while it runs. */
export async function startServer(initial: Listener = (_req, res) => res.end()) {
  let listener = initial;
  const server: Server = createServer((req, res) => listener(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    use(next: Listener) {
      listener = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
