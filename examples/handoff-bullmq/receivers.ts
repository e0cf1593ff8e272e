/**
 * The receivers of both services, with their handlers: one set of `.on(...)` registrations shared by
 * the receiving process (hand-off mode: it only enqueues) and the worker process (it runs them).
 */
import {
  createCrmReceiver,
  createMailReceiver,
  type DedupStore,
  type HandoffTarget,
  type Logger,
} from '@svc/webhooks';

export interface ReceiverOptions {
  mailSecret: string;
  crmSecret: string;
  /** Where the workers' claims go; the receiving process does not claim (the job id is its check). */
  dedup?: DedupStore;
  /** Hand-off targets in the receiving process; absent in the worker. */
  handoff?: { mail: HandoffTarget; crm: HandoffTarget };
  /** Where each handled event's JSON line goes (the worker's stdout). */
  print?: (line: string) => void;
  logger?: Logger;
}

export function createReceivers({
  mailSecret,
  crmSecret,
  dedup,
  handoff,
  print = (line) => console.log(line),
  logger = (entry) => console.error(JSON.stringify(entry)),
}: ReceiverOptions) {
  const mail = createMailReceiver({ secret: mailSecret, dedup, logger, handoff: handoff?.mail });
  const crm = createCrmReceiver({ secret: crmSecret, dedup, logger, handoff: handoff?.crm });
  // Runs in the worker, once per delivery (a repeat or a job handed out again finds it completed).
  mail.onAny((event, { attempt }) =>
    print(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId, attempt })),
  );
  crm.onAny((event, { attempt }) =>
    print(JSON.stringify({ service: 'crm', event: event.name, deliveryId: event.deliveryId, attempt })),
  );
  return { mail, crm };
}

/** One queue per receiver; the hash-tag prefix keeps each queue in one slot on a Redis Cluster. */
export const QUEUES = { mail: 'webhooks-mail', crm: 'webhooks-crm' } as const;
export const PREFIX = '{svc-webhooks}';

export function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}.`);
  return value;
}
