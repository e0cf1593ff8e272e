/**
 * The demo's receiving side: the Express example (examples/express) on a real server at 127.0.0.1,
 * remembering what it handled in a SQLite file as the example does, with the switches the scenario
 * needs: a handler outage, and a redeploy with other secrets (a rotation) that swaps the app behind
 * the same port and keeps the file, so the new app knows what the old one handled. It also keeps the
 * ids of the email deliveries it answered 2xx: what a reconciler asks it holds (chapter 5).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DedupStore } from '@svc/webhooks';
import type { DeliveryHolder } from '@svc/webhooks/manage';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import { createApp, SERVER_TIMEOUTS } from '../express/server.js';

export interface DemoReceiverOptions {
  mailSecret: string;
  crmSecret: string;
  /** Called once per handled event (never for retries or duplicates). */
  onHandled(service: 'mail' | 'crm', name: string, deliveryId: string, detail: string): void;
}

export interface DemoReceiver {
  url: string;
  /** While true, the email handler throws (the receiver answers 500 handler_failed). */
  mailOutage: boolean;
  /** The CRM handler fails this many more times. */
  crmFailures: number;
  /** Redeploys the app with other CRM secrets (a rotation: [new, old], then [new]), on the same dedup file. */
  setCrmSecrets(secrets: string[]): void;
  /**
   * What a reconciler asks: which of these email deliveries did the app handle or acknowledge? The
   * app's email dedup key is `message-event`, so its store cannot answer by delivery id
   * (`createStoreHolder` refuses it): the app keeps the ids itself, as a table of its own would.
   */
  holder: DeliveryHolder;
  /** The SQLite dedup store, a `DedupStore` the reconciler takes turns in (its `lock`). */
  store: DedupStore;
  close(): Promise<void>;
}

export async function startDemoReceiver(options: DemoReceiverOptions): Promise<DemoReceiver> {
  const state = { mailOutage: false, crmFailures: 0 };
  const details = new Map<string, string>();
  const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-demo-'));
  const dedup = createSqliteStore({ path: join(dir, 'webhook-dedup.sqlite') });
  const acknowledged = new Set<string>();
  const app = (crmSecret: readonly string[]): RequestListener =>
    createApp({
      mailSecret: options.mailSecret,
      crmSecret,
      dedup,
      logger: () => {},
      handle: (event) => {
        if (event.service === 'crm') {
          if (state.crmFailures > 0) {
            state.crmFailures--;
            throw new Error('CRM sync backend busy');
          }
          return;
        }
        if (state.mailOutage) throw new Error('database unavailable');
        const messageId = (event.payload as { message_id?: unknown }).message_id;
        if (typeof messageId === 'string') details.set(event.deliveryId, messageId);
      },
      // The example's one JSON line per handled event, as it prints it on stdout.
      print: (line) => {
        const { service, event, deliveryId } = JSON.parse(line) as {
          service: 'mail' | 'crm';
          event: string;
          deliveryId: string;
        };
        if (service === 'mail') acknowledged.add(deliveryId);
        options.onHandled(service, event, deliveryId, details.get(deliveryId) ?? '');
        details.delete(deliveryId);
      },
    });

  let current = app([options.crmSecret]);
  const server = createServer(SERVER_TIMEOUTS, (req, res) => {
    // A duplicate is acknowledged too: the app holds it under another delivery's key.
    const id = req.url === '/webhooks/mail' ? req.headers['x-svcmail-id'] : undefined;
    if (typeof id === 'string') res.once('finish', () => res.statusCode < 300 && acknowledged.add(id));
    current(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get mailOutage() {
      return state.mailOutage;
    },
    set mailOutage(value: boolean) {
      state.mailOutage = value;
    },
    get crmFailures() {
      return state.crmFailures;
    },
    set crmFailures(value: number) {
      state.crmFailures = value;
    },
    setCrmSecrets(secrets) {
      current = app(secrets);
    },
    holder: {
      held: async (service, ids) =>
        new Set(service === 'mail' ? ids.filter((id) => acknowledged.has(id)) : ids),
    },
    store: dedup,
    async close() {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await dedup.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
