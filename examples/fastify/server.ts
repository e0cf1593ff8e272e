/**
 * @module
 * Receiving both services' webhooks in a Fastify 5 app.
 *
 * Run from this folder (build the package once at the repo root first: `npm run build`):
 *   SVC_MAIL_WEBHOOK_SECRET=... SVC_CRM_WEBHOOK_SECRET=... PORT=3000 npx tsx server.ts
 */
import { pathToFileURL } from 'node:url';
import { createCrmReceiver, createMailReceiver, type Logger } from '@svc/webhooks';
import { webhookPlugin } from '@svc/webhooks/fastify';
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

  const app = Fastify();
  // Each registration is its own encapsulated scope with a raw-Buffer body parser, so the
  // signature is checked over the exact bytes while the rest of the app keeps the JSON parser.
  app.register(webhookPlugin, { receiver: mail, path: '/webhooks/mail' });
  app.register(webhookPlugin, { receiver: crm, path: '/webhooks/crm' });

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
  await app.listen({ port, host: '0.0.0.0' });
  console.error(`listening on http://localhost:${port}`);
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}.`);
  return value;
}
