/**
 * @module
 * Receiving both services' webhooks with plain `node:http`.
 *
 * Run from this folder (build the package once at the repo root first: `npm run build`):
 *   SVC_MAIL_WEBHOOK_SECRET=... SVC_CRM_WEBHOOK_SECRET=... PORT=3000 npx tsx server.ts
 */
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createCrmReceiver, createMailReceiver, type Logger } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';

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

  // The listener reads the raw body itself (capped at 1 MiB): nothing else may read the stream first.
  return createServer(createNodeListener({ '/webhooks/mail': mail, '/webhooks/crm': crm }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  const server = createApp({
    mailSecret: required('SVC_MAIL_WEBHOOK_SECRET'),
    crmSecret: required('SVC_CRM_WEBHOOK_SECRET'),
  });
  server.listen(port, () => console.error(`listening on http://localhost:${port}`));
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}.`);
  return value;
}
