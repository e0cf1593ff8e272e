/**
 * @module
 * Receiving both services' webhooks with plain `node:http`.
 *
 * Run from this folder (build the package once at the repo root first: `npm run build`), with your
 * webhooks' secrets (at least 16 characters; for a local try, random ones):
 *   export SVC_MAIL_WEBHOOK_SECRET=$(openssl rand -hex 24) SVC_CRM_WEBHOOK_SECRET=$(openssl rand -hex 24)
 *   PORT=3000 npx tsx server.ts
 *
 * Handled deliveries are remembered in a SQLite file (`SVC_DEDUP_FILE`, default
 * `webhook-dedup.sqlite` here), so a retry that arrives after a restart or a redeploy is answered as a
 * duplicate instead of running the handler again.
 *
 * It listens on 127.0.0.1 (this machine only) unless `HOST` says otherwise. A webhook receiver is
 * public by nature (the services must reach it): in production set `HOST=0.0.0.0` (every interface)
 * or keep 127.0.0.1 behind a reverse proxy that forwards the webhook paths.
 */
import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createCrmReceiver, createMailReceiver, type DedupStore, type Logger } from '@svc/webhooks';
import { createNodeListener } from '@svc/webhooks/node';
import { createSqliteStore } from '@svc/webhooks/sqlite';
import { MIN_SECRET_LENGTH } from '@svc/webhooks/verify';

/**
 * Server timeouts against slow clients (slow-loris), which Node otherwise bounds only at 60 s for the
 * headers and 5 min for the request: the headers within 5 s, the whole request within 10 s (the
 * services give up at 10 s anyway), checked every second (Node checks every 30 s by default). A slow
 * body meets the receivers' own `bodyTimeoutMs` (5 s) first and gets 408 `body_timeout`.
 */
export const SERVER_TIMEOUTS = {
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  connectionsCheckingInterval: 1_000,
} satisfies ServerOptions;

export interface AppOptions {
  mailSecret: string;
  crmSecret: string;
  /**
   * Where both receivers remember what they handled (keys are per service). The command line below
   * passes a SQLite file, which survives restarts; default: a memory store of each receiver.
   */
  dedup?: DedupStore;
  /** Where each handled event's JSON line goes. Default: stdout. */
  print?: (line: string) => void;
  /**
   * Receiver logs (refusals, failures). Default: the receivers' own, warnings and errors on the
   * console, a handler's error with its stack; pass pino, winston or `false` (docs/observability.md).
   */
  logger?: Logger | false;
}

/** The server, not listening yet: `createApp(options).listen(port)`. */
export function createApp({
  mailSecret,
  crmSecret,
  print = (line) => console.log(line),
  logger,
  dedup,
}: AppOptions): Server {
  const mail = createMailReceiver({ secret: mailSecret, dedup, logger });
  const crm = createCrmReceiver({ secret: crmSecret, dedup, logger });
  // Runs once per delivery: retries and duplicates are answered 200 without calling it again.
  mail.onAny((event) =>
    print(JSON.stringify({ service: 'mail', event: event.name, deliveryId: event.deliveryId })),
  );
  crm.onAny((event) =>
    print(JSON.stringify({ service: 'crm', event: event.name, deliveryId: event.deliveryId })),
  );

  // The listener reads the raw body itself (capped at 1 MiB, 5 s): nothing else may read the stream first.
  return createServer(SERVER_TIMEOUTS, createNodeListener({ '/webhooks/mail': mail, '/webhooks/crm': crm }));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secrets = secretsFromEnv('SVC_MAIL_WEBHOOK_SECRET', 'SVC_CRM_WEBHOOK_SECRET');
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  const server = createApp({
    mailSecret: secrets.SVC_MAIL_WEBHOOK_SECRET,
    crmSecret: secrets.SVC_CRM_WEBHOOK_SECRET,
    // Survives restarts: a retry after a redeploy is a duplicate, not a second run.
    dedup: createSqliteStore({ path: process.env.SVC_DEDUP_FILE ?? 'webhook-dedup.sqlite' }),
  });
  server.listen(port, host, () =>
    console.error(`listening on http://${host}:${(server.address() as AddressInfo).port}`),
  );
}

/**
 * Why a webhook secret from the environment is unusable, in words that name the variable; undefined
 * when it is fine. The receivers refuse a secret under MIN_SECRET_LENGTH (16) characters.
 */
function secretProblem(name: string, value: string | undefined): string | undefined {
  if (!value) {
    return `${name} is not set: export it (at least ${MIN_SECRET_LENGTH} characters, e.g. $(openssl rand -hex 24))`;
  }
  if (value.trim() !== value) {
    return `${name} has leading or trailing whitespace (a newline from a .env file?): remove it`;
  }
  if (value.length < MIN_SECRET_LENGTH) {
    return `${name} is shorter than ${MIN_SECRET_LENGTH} characters: use the whole secret the service issued (for a local try, e.g. $(openssl rand -hex 24))`;
  }
  return undefined;
}

/** The named secrets, or exit 1 after one line per missing or unusable variable. */
function secretsFromEnv<const N extends string>(...names: N[]): Record<N, string> {
  const problems = names.flatMap((name) => secretProblem(name, process.env[name]) ?? []);
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    process.exit(1);
  }
  return Object.fromEntries(names.map((name) => [name, process.env[name]!])) as Record<N, string>;
}
