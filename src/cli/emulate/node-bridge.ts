/** node:http to web `Request` and web `Response` to node:http, for the emulator's server. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body the emulator reads (management calls are small). */
const MAX_BODY = 1_048_576;

/** The body of `req`, or null when it is larger than 1 MiB (reading stops there). */
export async function readBody(req: IncomingMessage): Promise<Uint8Array | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    length += chunk.byteLength;
    if (length > MAX_BODY) return null;
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

export async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** `req` as a web `Request` addressed at `origin`, whatever Host the caller used. */
export function toRequest(req: IncomingMessage, origin: string, body: Uint8Array): Request {
  const method = req.method ?? 'GET';
  return new Request(new URL(req.url ?? '/', origin), {
    method,
    headers: Object.entries(req.headers).flatMap(([name, value]) =>
      value === undefined
        ? []
        : (Array.isArray(value) ? value : [value]).map((v) => [name, v] as [string, string]),
    ),
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  });
}
