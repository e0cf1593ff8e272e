import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lingerThenClose } from '../../../src/adapters/node/linger.js';
import type { ConformanceTarget } from '../conformance.js';

export const PATHS = { mail: '/webhooks/mail', crm: '/webhooks/crm' } as const;

/** Listens on 127.0.0.1, port 0; resolves to the base URL and a close that ends open connections. */
export async function listen(server: Server): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A target for a `node:http` listener. */
export async function listenerTarget(
  listener: RequestListener,
  handled: (deliveryId: string) => number,
): Promise<ConformanceTarget> {
  const { baseUrl, close } = await listen(createServer(listener));
  return { baseUrl, paths: PATHS, handled, close };
}

/**
 * A minimal web-standard server over node:http for fetch handlers: IncomingMessage -> Request with
 * the body streamed (so a handler that stops reading stops the upload), Response -> ServerResponse.
 */
export function fetchListener(handler: (request: Request) => Promise<Response>): RequestListener {
  return (req, res) => {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method: req.method,
      headers,
      body: hasBody ? bodyStream(req) : null,
      signal: controller.signal,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    handler(request)
      .then(async (response) => {
        const body = Buffer.from(await response.arrayBuffer());
        const out: Record<string, string> = {};
        response.headers.forEach((value, name) => {
          out[name] = value;
        });
        // The handler left the body unread (413): answer, then cut the connection.
        lingerThenClose(req, res);
        res.writeHead(response.status, { ...out, 'content-length': body.byteLength });
        res.end(body);
      })
      .catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
  };
}

/**
 * The request body as a web stream with backpressure. Unlike `Readable.toWeb`, cancelling it (a
 * handler refusing an oversized body) only stops reading: `lingerThenClose` deals with the rest,
 * where destroying the request would reset the socket under the answer.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let onData: ((chunk: Buffer) => void) | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onData = (chunk) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        };
        req.on('data', onData);
        req.once('end', () => cancelled || controller.close());
        req.once('error', (error) => cancelled || controller.error(error));
        req.pause();
      },
      pull() {
        req.resume();
      },
      cancel() {
        cancelled = true;
        if (onData) req.off('data', onData);
        req.pause();
      },
    },
    { highWaterMark: 1 },
  );
}
