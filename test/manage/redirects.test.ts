import type { IncomingMessage } from 'node:http';
import { isWebhookError, type WebhookError } from '@svc/webhooks';
import { createCrmClient, createMailClient } from '@svc/webhooks/manage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../testing/support/servers.js';

// The clients never follow a redirect: the credential, custom headers and a POST body would go to
// whatever origin the Location names. Real servers on 127.0.0.1 and the real fetch (undici), since
// following redirects is fetch's default.
const KEY = 'zm_live_redirect_secret_value';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let api: Awaited<ReturnType<typeof startServer>>;
let elsewhere: Awaited<ReturnType<typeof startServer>>;
const seenElsewhere: Seen[] = [];
let location = '';
let status = 307;

function record(req: IncomingMessage, into: Seen[], done: () => void): void {
  let body = '';
  req.setEncoding('utf8').on('data', (c: string) => {
    body += c;
  });
  req.on('end', () => {
    into.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    done();
  });
}

beforeAll(async () => {
  elsewhere = await startServer((req, res) =>
    record(req, seenElsewhere, () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ data: [], id: 'wh_evil', url: 'https://evil.example', events: [] }));
    }),
  );
  api = await startServer((req, res) =>
    record(req, [], () => {
      res.writeHead(status, { Location: location, 'Content-Type': 'application/json' });
      res.end('{"moved":true}');
    }),
  );
});
afterAll(async () => {
  await api?.close();
  await elsewhere?.close();
});

async function failure(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

describe('redirects are refused, never followed', () => {
  it('a 307 to another origin: nothing reaches it (key, custom headers, POST body); response_invalid names it', async () => {
    status = 307;
    location = `${elsewhere.url}/api/v1/webhooks`;
    seenElsewhere.length = 0;
    const mail = createMailClient({
      baseUrl: api.url,
      apiKey: KEY,
      headers: { 'X-Tenant-Secret': 'tenant-credential' },
    });
    const error = await failure(
      mail.createWebhook({ url: 'https://hooks.example.com/mail', events: ['bounced'] }),
    );
    expect(error).toMatchObject({ code: 'response_invalid', status: 307 });
    expect(error.message).toContain(`redirect to ${elsewhere.url}`);
    expect(error.message).toContain('POST /api/v1/webhooks');
    expect(error.message).not.toContain(KEY);
    const listed = await failure(mail.listWebhooks());
    expect(listed.code).toBe('response_invalid');
    expect(seenElsewhere).toEqual([]);
  });

  it('every 3xx, also a relative or same-origin Location, is refused and says it was the same origin', async () => {
    seenElsewhere.length = 0;
    const crm = createCrmClient({ baseUrl: api.url, token: 'crm_secret_token' });
    for (const code of [301, 302, 303, 308]) {
      status = code;
      location = '/v1/webhooks?page=2';
      const error = await failure(crm.listWebhooks());
      expect(error, String(code)).toMatchObject({ code: 'response_invalid', status: code });
      expect(error.message).toContain(`redirect to the same origin (${api.url})`);
      expect(error.message).not.toContain('crm_secret_token');
    }
    status = 302;
    location = 'http://[not a url';
    const unreadable = await failure(crm.listWebhooks());
    expect(unreadable.message).toContain('unreadable Location');
    status = 302;
    location = '';
    expect((await failure(crm.listWebhooks())).message).toContain('without a Location');
  });

  it('a custom fetch that follows redirects anyway: its answer is not used', async () => {
    status = 307;
    location = `${elsewhere.url}/api/v1/webhooks`;
    const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: 'follow' });
    const mail = createMailClient({ baseUrl: api.url, apiKey: KEY, fetch: following });
    const error = await failure(mail.listWebhooks());
    expect(error.code).toBe('response_invalid');
    expect(error.message).toContain('followed a redirect');
    expect(error.message).not.toContain(KEY);
  });
});
