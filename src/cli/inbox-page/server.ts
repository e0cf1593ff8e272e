/**
 * The inbox page's HTTP server, on 127.0.0.1 only: the page at `/` and its JSON API under `/api/`.
 * Protections, as the emulator's page has them: a Host other than 127.0.0.1 or localhost is refused
 * (DNS rebinding); writes are JSON POSTs only (a cross-site form cannot send `application/json`
 * without a preflight this server never grants) and a foreign `Origin` is refused; request bodies
 * are bounded; the page runs under a strict Content-Security-Policy and sets every row value as text.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HandoffRunner } from '../../handoff/job/types.js';
import type { Inbox } from '../../inbox/inbox.js';
import { send } from '../emulate/node-bridge.js';
import { PAGE_CSP, PAGE_HTML } from './page.js';
import { jsonResponse, refuse, runApiRoute } from './routes.js';

/** Largest request body read: a re-drive's JSON is a few hundred bytes. */
export const MAX_REQUEST_BYTES = 16_384;

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** What the page shows about its target (a masked URL or a file path) and how failures map. */
export interface InboxPageOptions {
  inbox: Inbox;
  /** The target as the page names it: a URL with its password masked, or a file path. */
  label: string;
  /** A database failure as `{ status, code, message }`, its text scrubbed of secrets. */
  failure(error: unknown): { status: number; code: string; message: string };
  /** The app's receivers (`--receiver`): re-drives go through them. */
  receivers?: readonly HandoffRunner[];
}

/** The body of `req` up to `MAX_REQUEST_BYTES`, or null past it (reading stops there). */
async function readBounded(req: IncomingMessage): Promise<Uint8Array | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_REQUEST_BYTES) return null;
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    length += chunk.byteLength;
    if (length > MAX_REQUEST_BYTES) return null;
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** Starts the page's server on 127.0.0.1:`port` (0: a free port); resolves once it listens. */
export async function startInboxPage(
  options: InboxPageOptions,
  port: number,
): Promise<{ server: Server; url: string; port: number; close(): Promise<void> }> {
  const { inbox, label, failure, receivers = [] } = options;
  let origin = '';

  async function answer(req: IncomingMessage): Promise<Response> {
    // Only local pages and tools: a foreign Host is a DNS-rebinding attempt.
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    if (!LOCAL_HOSTS.has(host)) return refuse(403, 'forbidden_host', 'Open the inbox page at 127.0.0.1.');
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', origin);
    if (url.pathname === '/' && (method === 'GET' || method === 'HEAD')) {
      return new Response(method === 'HEAD' ? null : PAGE_HTML, {
        headers: {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          'Content-Security-Policy': PAGE_CSP,
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
          'X-Frame-Options': 'DENY',
        },
      });
    }
    if (url.pathname === '/api/target' && method === 'GET')
      return jsonResponse(200, { label, dialect: inbox.dialect });
    let parsed: unknown;
    if (method === 'POST') {
      const foreign = req.headers.origin !== undefined && req.headers.origin !== origin;
      if (foreign && !isLocalOrigin(req.headers.origin!))
        return refuse(403, 'forbidden_origin', 'Writes come from the inbox page only.');
      if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? ''))
        return refuse(415, 'unsupported_media_type', 'Send Content-Type: application/json.');
      const body = await readBounded(req);
      if (body === null)
        return refuse(413, 'body_too_large', `Request bodies are limited to ${MAX_REQUEST_BYTES} bytes.`);
      try {
        parsed = JSON.parse(new TextDecoder().decode(body));
      } catch {
        return refuse(400, 'invalid_json', 'The body is not JSON.');
      }
    }
    try {
      const response = await runApiRoute(inbox, method, url, parsed, receivers);
      return response ?? refuse(404, 'not_found', `No route ${method} ${url.pathname}.`);
    } catch (error) {
      const { status, code, message } = failure(error);
      return refuse(status, code, message);
    }
  }

  /** An origin on this machine at this server's port (127.0.0.1 or localhost). */
  function isLocalOrigin(value: string): boolean {
    try {
      const parsed = new URL(value);
      return LOCAL_HOSTS.has(parsed.hostname) && parsed.port === new URL(origin).port;
    } catch {
      return false;
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    answer(req)
      .then((response) => send(res, response))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'internal_error', message: 'The inbox page failed.' } }));
      });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${actual}`;
  return {
    server,
    url: `${origin}/`,
    port: actual,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
