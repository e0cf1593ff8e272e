import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { secretFromEnv } from './env';

function create() {
  // No `logger`: warnings and errors (a handler's, with its stack) go to the console, which Next.js
  // shows in its server output. Pass pino or winston as they are (docs/observability.md).
  const mail = createMailReceiver({ secret: secretFromEnv('SVC_MAIL_WEBHOOK_SECRET') });
  const crm = createCrmReceiver({ secret: secretFromEnv('SVC_CRM_WEBHOOK_SECRET') });
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
// Kept on globalThis: App Router and Pages Router routes are separate bundles, and both must share
// the same memory dedup store (use @svc/webhooks/redis or /postgres when you run several instances).
const slot = globalThis as typeof globalThis & { svcWebhookReceivers?: ReturnType<typeof create> };

export function receivers(): ReturnType<typeof create> {
  slot.svcWebhookReceivers ??= create();
  return slot.svcWebhookReceivers;
}
