/**
 * `emulate --forward mail=URL --forward crm=URL`: the webhooks registered at start, each to every
 * event of its service, signed with `--secret service=…`, the service's environment variable (the
 * one the app reads) or a new secret printed once; then one check delivery to each.
 */
import { CRM_EVENT_NAMES } from '../../crm/event-names.js';
import { MAIL_EVENT_NAMES } from '../../mail/event-names.js';
import { checkSecrets } from '../../verify/secrets.js';
import { parseService, type Service } from '../events.js';
import { CliError } from '../exit-codes.js';
import { parseUrl } from '../http.js';
import { SECRET_ENV, SECRET_FIX } from '../secrets.js';
import type { EmulatorState } from './state.js';

/** A `--forward` as given. */
export interface Forward {
  service: Service;
  url: string;
}

/** A forward once registered: its webhook, and its secret when the emulator made it (shown once). */
export interface RegisteredForward extends Forward {
  webhookId: string;
  /** Where the secret came from: `--secret`, the environment variable's name, or `generated`. */
  secretFrom: string;
  /** The new secret, only when generated (a secret you gave is never printed). */
  secret?: string;
}

/** `service=value` of a repeatable option. */
function split(value: string, option: string): { service: Service; value: string } {
  const at = value.indexOf('=');
  if (at <= 0) {
    throw new CliError(
      `${option} "${value}" is not service=value.`,
      undefined,
      'usage',
      `Write ${option} mail=${option === '--forward' ? 'http://127.0.0.1:3000/webhooks/mail' : 'whsec_…'}.`,
    );
  }
  return { service: parseService(value.slice(0, at)), value: value.slice(at + 1) };
}

/** The `--forward` options, checked (mail or crm, an http(s) URL). */
export function parseForwards(values: readonly string[]): Forward[] {
  return values.map((value) => {
    const { service, value: url } = split(value, '--forward');
    return { service, url: parseUrl(url, `--forward ${service}`) };
  });
}

/**
 * The secret of each forwarded service: `--secret service=…`, else the service's environment
 * variable, else none (a new one is generated). One no receiver accepts is a usage error (exit 2).
 */
export function forwardSecrets(
  forwards: readonly Forward[],
  given: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Map<Service, { secret: string; from: string }> {
  const secrets = new Map<Service, { secret: string; from: string }>();
  for (const option of given) {
    const { service, value } = split(option, '--secret');
    if (!forwards.some((f) => f.service === service)) {
      throw new CliError(`--secret ${service}=… is given without --forward ${service}=URL.`);
    }
    secrets.set(service, { secret: value, from: '--secret' });
  }
  for (const { service } of forwards) {
    const fromEnv = env[SECRET_ENV[service]];
    if (!secrets.has(service) && fromEnv)
      secrets.set(service, { secret: fromEnv, from: SECRET_ENV[service] });
  }
  for (const [service, { secret, from }] of secrets) {
    const { problem } = checkSecrets(secret);
    if (problem) {
      throw new CliError(`${from} (${service}): ${problem.reason}.`, undefined, 'secret_invalid', SECRET_FIX);
    }
  }
  return secrets;
}

/** Registers one webhook per forward, to every event of its service. */
export function registerForwards(
  state: EmulatorState,
  forwards: readonly Forward[],
  secrets: Map<Service, { secret: string; from: string }>,
): RegisteredForward[] {
  return forwards.map(({ service, url }) => {
    const own = secrets.get(service);
    const secret = own ? { secret: own.secret } : {};
    const webhook =
      service === 'mail'
        ? state.mail.createWebhook({
            url,
            events: [...MAIL_EVENT_NAMES, ...state.newEvents.mail],
            description: 'svc-webhooks emulate --forward',
            ...secret,
          })
        : state.crm.createWebhook({
            name: 'svc-webhooks emulate --forward',
            url,
            events: [...CRM_EVENT_NAMES, ...state.newEvents.crm],
            ...secret,
          });
    return own
      ? { service, url, webhookId: webhook.id, secretFrom: own.from }
      : { service, url, webhookId: webhook.id, secretFrom: 'generated', secret: webhook.secret };
  });
}

/**
 * One check delivery per forward, so the first lines say whether the app verifies them: the email
 * service's own test send (a synthetic `delivered`, email-service §6 rule 7) to each email webhook,
 * and, since the CRM has no test send, one `contact.created` to the CRM webhooks. Never throws: the
 * outcome is in the printed attempt lines.
 */
export async function sendChecks(
  state: EmulatorState,
  forwards: readonly RegisteredForward[],
): Promise<void> {
  const work: Array<Promise<unknown>> = forwards
    .filter((f) => f.service === 'mail')
    .map((f) => state.mail.sendTest(f.webhookId));
  if (forwards.some((f) => f.service === 'crm')) work.push(state.crm.emit('contact.created'));
  await Promise.allSettled(work);
}
