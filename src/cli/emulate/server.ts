/**
 * The emulator's HTTP server on 127.0.0.1: both services' management APIs (email under `/api/…`
 * with its OpenAPI description at `/docs` and `/docs/json`, CRM under `/v1/…`, so one base URL
 * serves both), the control routes under `/_emulator/`, the live
 * page at `/` and its event stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CRM_TEST_TOKEN, createCrmApi } from '../../testing/api/crm-api.js';
import { createMailApi, MAIL_TEST_API_KEY } from '../../testing/api/mail-api.js';
import { json } from '../../testing/api/responses.js';
import { matchControlRoute, runControlRoute } from './control-routes.js';
import { readBody, send, toRequest } from './node-bridge.js';
import { PAGE_HTML } from './page.js';
import type { EmulatorState } from './state.js';

/** Where the emulator listens and the credentials it prints. */
export interface EmulatorAddress {
  url: string;
  port: number;
  mail: { baseUrl: string; apiKey: string };
  crm: { baseUrl: string; token: string };
}

/** Starts the server; resolves once it listens. */
export async function startEmulatorServer(
  state: EmulatorState,
  port: number,
): Promise<{ server: Server; address: EmulatorAddress; close(): Promise<void> }> {
  let mailApi: ReturnType<typeof createMailApi> | undefined;
  let crmApi: ReturnType<typeof createCrmApi> | undefined;
  let origin = '';
  const streams = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal_error', message: 'The emulator failed.' } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Only local pages and tools: a foreign Host is a DNS-rebinding attempt.
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') {
      return send(
        res,
        json(403, { error: { code: 'forbidden', message: 'Call the emulator at 127.0.0.1.' } }),
      );
    }
    const path = new URL(req.url ?? '/', origin).pathname;
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(PAGE_HTML);
      return;
    }
    if (method === 'GET' && path === '/_emulator/stream') return openStream(res);
    const body = await readBody(req);
    if (body === null) {
      return send(
        res,
        json(413, { error: { code: 'body_too_large', message: 'Bodies are limited to 1 MiB.' } }),
      );
    }
    const control = matchControlRoute(method, path);
    if (control) {
      // Writes need a JSON content type: a cross-site form cannot send one without a CORS preflight,
      // which the emulator never grants, so another site cannot press the page's buttons.
      if (method === 'POST' && !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        return send(
          res,
          json(415, {
            error: { code: 'unsupported_media_type', message: 'Send Content-Type: application/json.' },
          }),
        );
      }
      let parsed: unknown = {};
      if (body.byteLength > 0) {
        try {
          parsed = JSON.parse(new TextDecoder().decode(body));
        } catch {
          return send(res, json(400, { error: { code: 'invalid_json', message: 'The body is not JSON.' } }));
        }
      }
      return send(res, await runControlRoute(state, control, parsed));
    }
    // The services' own APIs, addressed at the emulator's origin whatever Host the caller used.
    const request = toRequest(req, origin, body);
    // The email service's answers (`/api/…`, `/docs`) all carry its per-IP rate-limit headers,
    // a 404 under `/api` included (email-service §8).
    const response =
      (await mailApi!.handle(request, { address: req.socket.remoteAddress, notFound: true })) ??
      (await crmApi!.handle(request));
    return send(
      res,
      response ?? json(404, { error: { code: 'not_found', message: `No route ${method} ${path}.` } }),
    );
  }

  function openStream(res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  }

  // One "change" message per burst of emitter events: the page then reads /_emulator/state.
  let pending: ReturnType<typeof setTimeout> | undefined;
  const unsubscribe = state.subscribe(() => {
    if (pending) return;
    pending = setTimeout(() => {
      pending = undefined;
      for (const stream of streams) stream.write('event: change\ndata: {}\n\n');
    }, 50);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${actual}`;
  mailApi = createMailApi(state.mail, { baseUrl: origin });
  crmApi = createCrmApi(state.crm, { baseUrl: origin });
  return {
    server,
    address: {
      url: `${origin}/`,
      port: actual,
      mail: { baseUrl: origin, apiKey: MAIL_TEST_API_KEY },
      crm: { baseUrl: origin, token: CRM_TEST_TOKEN },
    },
    async close() {
      unsubscribe();
      if (pending) clearTimeout(pending);
      for (const stream of streams) stream.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
