/**
 * The demo's receiving side: an Express app with the library's email and CRM receivers (memory dedup
 * store), as in examples/express, plus the switches the scenario needs (an outage, secret rotation).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCrmReceiver, createMailReceiver } from '@svc/webhooks';
import { type ExpressWebhookMiddleware, webhookMiddleware } from '@svc/webhooks/express';
import express from 'express';

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
  /** Replaces the CRM secrets (a rotation: [new, old], then [new]). */
  setCrmSecrets(secrets: string[]): void;
  close(): Promise<void>;
}

export async function startDemoReceiver(options: DemoReceiverOptions): Promise<DemoReceiver> {
  const state = { mailOutage: false, crmFailures: 0 };
  // email-service §6 rule 2: `delivered` arrives twice per message; collapse by message_id + event.
  const mail = createMailReceiver({
    secret: options.mailSecret,
    dedupKey: 'message-event',
    logger: () => {},
  }).onAny((event) => {
    if (state.mailOutage) throw new Error('database unavailable');
    const messageId = (event.payload as { message_id?: string }).message_id ?? '';
    options.onHandled('mail', event.name, event.deliveryId, messageId);
  });
  const crmMiddleware = (secrets: string[]): ExpressWebhookMiddleware =>
    webhookMiddleware(
      createCrmReceiver({ secret: secrets, logger: () => {} }).onAny((event) => {
        if (state.crmFailures > 0) {
          state.crmFailures--;
          throw new Error('CRM sync backend busy');
        }
        options.onHandled('crm', event.name, event.deliveryId, '');
      }),
    );
  let crm = crmMiddleware([options.crmSecret]);

  const app = express();
  app.post('/webhooks/mail', webhookMiddleware(mail));
  app.post('/webhooks/crm', (req, res, next) => crm(req, res, next));
  app.use(express.json());

  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
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
      crm = crmMiddleware(secrets);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
