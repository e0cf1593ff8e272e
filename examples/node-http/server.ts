/**
 * @module
 * Receiving both services' webhooks with plain `node:http`.
 *
 * Run from this folder (build the package once at the repo root first: `npm run build`):
 *   SVC_MAIL_WEBHOOK_SECRET=... SVC_CRM_WEBHOOK_SECRET=... PORT=3000 npx tsx server.ts
 *
 * It listens on 127.0.0.1 (this machine only) unless `HOST` says otherwise. A webhook receiver is
 * public by nature (the services must reach it): in production set `HOST=0.0.0.0` (every interface)
 * or keep 127.0.0.1 behind a reverse proxy that forwards the webhook paths.
 */
import { createServer, type Server, type ServerOptions } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createCrmReceiver, createMailReceiver, type Logger } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';

/**
 * Server timeouts against slow clients (slow-loris), which Node otherwise bounds only at 60 s for the
 * headers and 5 min for the request: the headers within 5 s, the whole request within 10 s (the
 * services give up at 10 s anyway), checked every second (Node checks every 30 s by default). A slow
 * body meets the receivers' own `bodyTimeoutMs` (5 s) first and gets 408 `body_timeout`.
 */
export const SERVER_TIMEOUTS = {
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  connectionsCheckingInterval: 1_000,
} satisfies ServerOptions;

export interface AppOptions {
  mailSecret: string;
  crmSecret: string;
  /** Where each handled event's JSON line goes. Default: stdout. */
  print?: (line: string) => void;
  /** Receiver logs (refusals, failures). Default: stderr. */
  logger?: Logger;
}

/** The server, not listening yet: `createApp(options).listen(port)`. */
export function createApp({
  mailSecret,
  crmSecret,
  print = (line) => console.log(line),
  logger = (entry) => console.error(JSON.stringify(entry)),
}: AppOptions): Server {
  const mail = createMailReceiver({ secret: mailSecret, logger });
  const crm = createCrmReceiver({ secret: crmSecret, logger });
  // Runs once per delivery: retries and duplicates are answered 200 without calling it again.
  mail.onAny((event) =>
    print(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId })),
  );
  crm.onAny((event) =>
    print(JSON.stringify({ service: 'crm', event: event.name, deliveryId: event.deliveryId })),
  );

  // The listener reads the raw body itself (capped at 1 MiB, 5 s): nothing else may read the stream first.
  return createServer(SERVER_TIMEOUTS, createNodeListener({ '/webhooks/mail': mail, '/webhooks/crm': crm }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  const server = createApp({
    mailSecret: required('SVC_MAIL_WEBHOOK_SECRET'),
    crmSecret: required('SVC_CRM_WEBHOOK_SECRET'),
  });
  server.listen(port, host, () => console.error(`listening on http://${host}:${port}`));
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}.`);
  return value;
}
