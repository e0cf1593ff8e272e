/**
 * The receivers of both services, with their handlers: one set of `.on(...)` registrations that the
 * receiving process (hand-off mode: it only enqueues) and the worker process (it runs them) share.
 */
import {
  createCrmReceiver,
  createMailReceiver,
  type DedupStore,
  type HandoffTarget,
  type Logger,
} from '@svc/webhooks';
import { MIN_SECRET_LENGTH } from '@svc/webhooks/verify';

export interface ReceiverOptions {
  mailSecret: string;
  crmSecret: string;
  dedup: DedupStore;
  /** Hand-off targets in the receiving process; absent in the worker. */
  handoff?: { mail: HandoffTarget; crm: HandoffTarget };
  /** Where each handled event's JSON line goes (the worker's stdout). */
  print?: (line: string) => void;
  /**
   * Receiver logs (refusals, failures). Default: the receivers' own, warnings and errors on the
   * console, a handler's error with its stack; pass pino, winston or `false` (docs/observability.md).
   */
  logger?: Logger | false;
}

export function createReceivers({
  mailSecret,
  crmSecret,
  dedup,
  handoff,
  print = (line) => console.log(line),
  logger,
}: ReceiverOptions) {
  const mail = createMailReceiver({ secret: mailSecret, dedup, logger, handoff: handoff?.mail });
  const crm = createCrmReceiver({ secret: crmSecret, dedup, logger, handoff: handoff?.crm });
  // Runs in the worker, once per delivery (a repeat or a redelivered job finds it completed).
  mail.onAny((event, { attempt }) =>
    print(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId, attempt })),
  );
  crm.onAny((event, { attempt }) =>
    print(JSON.stringify({ service: 'crm', event: event.name, deliveryId: event.deliveryId, attempt })),
  );
  return { mail, crm };
}

export const QUEUES = { mail: 'webhooks-mail', crm: 'webhooks-crm' } as const;

/**
 * Why a variable is unusable, in words that name it; undefined when it is fine. The receivers refuse
 * a webhook secret under MIN_SECRET_LENGTH (16) characters.
 */
function problemOf(name: string, value: string | undefined, secret: boolean): string | undefined {
  if (!value) {
    return secret
      ? `${name} is not set: export it (at least ${MIN_SECRET_LENGTH} characters, e.g. $(openssl rand -hex 24))`
      : `${name} is not set: export it (e.g. postgres://postgres@127.0.0.1:5432/postgres)`;
  }
  if (!secret) return undefined;
  if (value.trim() !== value) {
    return `${name} has leading or trailing whitespace (a newline from a .env file?): remove it`;
  }
  if (value.length < MIN_SECRET_LENGTH) {
    return `${name} is shorter than ${MIN_SECRET_LENGTH} characters: use the whole secret the service issued (for a local try, e.g. $(openssl rand -hex 24))`;
  }
  return undefined;
}

/**
 * The environment both processes need, or exit 1 after one line per missing or unusable variable
 * (start.ts checks it before starting either process, so the lines are printed once).
 */
export function readEnv(): { databaseUrl: string; mailSecret: string; crmSecret: string } {
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    SVC_MAIL_WEBHOOK_SECRET: process.env.SVC_MAIL_WEBHOOK_SECRET,
    SVC_CRM_WEBHOOK_SECRET: process.env.SVC_CRM_WEBHOOK_SECRET,
  };
  const problems = Object.entries(env).flatMap(
    ([name, value]) => problemOf(name, value, name !== 'DATABASE_URL') ?? [],
  );
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    process.exit(1);
  }
  return {
    databaseUrl: env.DATABASE_URL!,
    mailSecret: env.SVC_MAIL_WEBHOOK_SECRET!,
    crmSecret: env.SVC_CRM_WEBHOOK_SECRET!,
  };
}
