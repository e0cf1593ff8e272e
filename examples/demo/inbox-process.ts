/**
 * The demo's inbox chapter runs this as a real process (`node --import tsx inbox-process.ts`): a CRM
 * receiver in inbox mode on a SQLite file, and an inbox worker that runs each row in the app's
 * transaction, where the handler writes one row of `deals`. With HANG_AFTER_WRITE=1, the handler
 * prints `wrote <delivery id>` after its write and waits: the demo SIGKILLs the process there, after
 * the write and before the commit.
 *
 * env: SQLITE_PATH, PORT, CRM_SECRET, HANG_AFTER_WRITE. stdout: `ready` once listening.
 */
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { createCrmReceiver } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createInboxWorker, createSqliteInbox, sqliteTransactions } from '@svc/webhooks/sqlite';

const { SQLITE_PATH = '', PORT = '0', CRM_SECRET = '', HANG_AFTER_WRITE } = process.env;
const inbox = createSqliteInbox({ path: SQLITE_PATH });
const receiver = createCrmReceiver({ secret: CRM_SECRET, handoff: inbox, logger: () => {} });
receiver.on('deal.created', async (event, context) => {
  const tx = context.tx as DatabaseSync;
  tx.prepare('INSERT INTO deals (deal_id, delivery_id) VALUES (?, ?)').run(
    event.data.deal_id,
    event.deliveryId,
  );
  if (HANG_AFTER_WRITE === '1') {
    console.log(`wrote ${event.deliveryId}`);
    await new Promise(() => {}); // the demo kills the process here
  }
});
const app = new DatabaseSync(SQLITE_PATH);
app.exec('PRAGMA busy_timeout = 2000');
const worker = createInboxWorker({
  receiver,
  inbox,
  transactions: sqliteTransactions(app),
  leaseMs: 1_000, // a killed run's row runs again after 1 s
  pollMs: 50,
});
const server = createServer(createNodeListener(receiver));
server.listen(Number(PORT), '127.0.0.1', () => {
  worker.start();
  console.log('ready');
});
