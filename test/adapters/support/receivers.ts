import { createCrmReceiver, createMailReceiver, type LogEntry } from '@svc/webhooks';
import { CRM_SECRET, MAIL_SECRET } from './deliveries.js';

/** Real receivers with a memory store each, counting handler runs per delivery id and keeping logs. */
export function createTestReceivers(options: { maxBodyBytes?: number } = {}) {
  const runs = new Map<string, number>();
  const logs: LogEntry[] = [];
  const logger = (entry: LogEntry) => logs.push(entry);
  const count = (deliveryId: string) => runs.set(deliveryId, (runs.get(deliveryId) ?? 0) + 1);
  const mail = createMailReceiver({ secret: MAIL_SECRET, logger, ...options });
  const crm = createCrmReceiver({ secret: CRM_SECRET, logger, ...options });
  mail.onAny((_event, { deliveryId }) => count(deliveryId));
  crm.onAny((_event, { deliveryId }) => count(deliveryId));
  return { mail, crm, logs, handled: (deliveryId: string) => runs.get(deliveryId) ?? 0 };
}
