/**
 * @module
 * The database inbox in an Express app with Drizzle (docs/inbox.md): each CRM delivery is verified,
 * written as one row of the inbox table in the app's own database and answered 200; the inbox worker
 * in the same process runs the handler in a Drizzle transaction, where the `deal.won` handler inserts
 * a row into `won_deals` and the inbox row moves to `handled` in the same commit. A crash between the
 * two cannot leave one without the other.
 *
 * Run from this folder (build the package once at the repo root first: `npm run build`), with the
 * webhook's secret, on a SQLite file (`INBOX_FILE`, default app.sqlite; Node 22.13+ for node:sqlite)
 * or on PostgreSQL (`DATABASE_URL`):
 *   SVC_CRM_WEBHOOK_SECRET=… PORT=3000 npx tsx server.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCrmReceiver } from '@svc/webhooks';
import { createExpressMiddleware } from '@svc/webhooks/express';
import { createInboxWorker } from '@svc/webhooks/postgres';
import { sql } from 'drizzle-orm';
import express from 'express';
import { openDatabase } from './database.js';

const secret = process.env.SVC_CRM_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set SVC_CRM_WEBHOOK_SECRET (the CRM webhook’s secret).');
  process.exit(1);
}
const database = await openDatabase();
await database.inbox.migrate();

const crm = createCrmReceiver({ secret, handoff: database.inbox });
crm.on('deal.won', async (event, context) => {
  // Through context.tx: committed with the inbox row's move to handled, or not at all.
  await database.write(
    context.tx,
    sql`INSERT INTO won_deals (deal_id, delivery_id, value) VALUES (${event.data.deal_id}, ${event.deliveryId}, ${event.data.value})`,
  );
  console.log(
    JSON.stringify({ handled: event.name, deal: event.data.deal_id, deliveryId: event.deliveryId }),
  );
});

const worker = createInboxWorker({
  receiver: crm,
  inbox: database.inbox,
  transactions: database.transactions,
  pollMs: 200,
});
const app = express();
app.post('/webhooks/crm', createExpressMiddleware(crm));
const server = createServer({ headersTimeout: 5_000, requestTimeout: 10_000 }, app);
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  worker.start();
  console.error(
    `inbox on ${database.name}; listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  );
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, async () => {
    server.close();
    await worker.stop();
    await database.close();
  });
}
