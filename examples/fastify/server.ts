/**
 * @module
 * Receiving both services' webhooks in a Fastify 5 app.
 *
 * Run from this folder (build the package once at the repo root first: `npm run build`):
 *   SVC_MAIL_WEBHOOK_SECRET=... SVC_CRM_WEBHOOK_SECRET=... PORT=3000 npx tsx server.ts
 *
 * It listens on 127.0.0.1 (this machine only) unless `HOST` says otherwise. A webhook receiver is
 * public by nature (the services must reach it): in production set `HOST=0.0.0.0` (every interface)
 * or keep 127.0.0.1 behind a reverse proxy that forwards the webhook paths.
 */
import { pathToFileURL } from 'node:url';
import { createCrmReceiver, createMailReceiver, type Logger } from '@svc/webhooks';
import { createFastifyPlugin } from '@svc/webhooks/fastify';
import Fastify, { type FastifyInstance } from 'fastify';

export interface AppOptions {
  mailSecret: string;
  crmSecret: string;
  /** Where each handled event's JSON line goes. Default: stdout. */
  print?: (line: string) => void;
  /** Receiver logs (refusals, failures). Default: stderr. */
  logger?: Logger;
}

export function createApp({
  mailSecret,
  crmSecret,
  print = (line) => console.log(line),
  logger = (entry) => console.error(JSON.stringify(entry)),
}: AppOptions): FastifyInstance {
  const mail = createMailReceiver({ secret: mailSecret, logger });
  const crm = createCrmReceiver({ secret: crmSecret, logger });
  // Runs once per delivery: retries and duplicates are answered 200 without calling it again.
  mail.onAny((event) =>
    print(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId })),
  );
  crm.onAny((event) =>
    print(JSON.stringify({ service: 'crm', event: event.name, deliveryId: event.deliveryId })),
  );

  // Fastify sets no request deadline by default (slow-loris): the headers within 5 s, the whole
  // request within 10 s (the services give up at 10 s anyway), checked every second; a socket idle
  // for 15 s is closed. A slow body meets the plugin's own deadline (the receiver's bodyTimeoutMs,
  // 5 s) first and gets 408 body_timeout.
  const app = Fastify({
    requestTimeout: 10_000,
    connectionTimeout: 15_000,
    http: { headersTimeout: 5_000, connectionsCheckingInterval: 1_000 },
  });
  // Each registration is its own encapsulated scope with a raw-Buffer body parser, so the
  // signature is checked over the exact bytes while the rest of the app keeps the JSON parser.
  app.register(createFastifyPlugin(mail, { path: '/webhooks/mail' }));
  app.register(createFastifyPlugin(crm, { path: '/webhooks/crm' }));

  // Your other routes get parsed JSON as usual.
  app.post('/api/echo', async (request) => request.body);
  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  const app = createApp({
    mailSecret: required('SVC_MAIL_WEBHOOK_SECRET'),
    crmSecret: required('SVC_CRM_WEBHOOK_SECRET'),
  });
  const host = process.env.HOST ?? '127.0.0.1';
  await app.listen({ port, host });
  console.error(`listening on http://${host}:${port}`);
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}.`);
  return value;
}
