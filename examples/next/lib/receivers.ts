import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import { secretFromEnv } from './env';

function create() {
  // No `logger`: warnings and errors (a handler's, with its stack) go to the console, which Next.js
  // shows in its server output. Pass pino or winston as they are (docs/observability.md).
  const mailSecret = secretFromEnv('SVC_MAIL_WEBHOOK_SECRET');
  const crmSecret = secretFromEnv('SVC_CRM_WEBHOOK_SECRET');
  // Handled deliveries are remembered in a SQLite file, so a retry that arrives after a restart or a
  // redeploy is a duplicate, not a second run. One server: a file on its disk; several instances or
  // a serverless platform (no lasting disk): @svc/webhooks/redis or /postgres.
  const dedup = createSqliteStore({ path: process.env.SVC_DEDUP_FILE ?? 'webhook-dedup.sqlite' });
  const mail = createMailReceiver({ secret: mailSecret, dedup });
  const crm = createCrmReceiver({ secret: crmSecret, dedup });
  // One JSON line per handled event; retries and duplicates are answered 200 without a second run.
  mail.onAny((event) =>
    console.log(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId })),
  );
  crm.onAny((event) =>
    console.log(JSON.stringify({ service: 'crm', event: event.name, deliveryId: event.deliveryId })),
  );
  return { mail, crm };
}

// One pair per server process, created on the first request (secrets are not needed at build time).
// Kept on globalThis: App Router and Pages Router routes are separate bundles, and both share one
// store (one connection to the file).
const slot = globalThis as typeof globalThis & { svcWebhookReceivers?: ReturnType<typeof create> };

export function receivers(): ReturnType<typeof create> {
  slot.svcWebhookReceivers ??= create();
  return slot.svcWebhookReceivers;
}
