/**
 * The management client of a command that talks to a service's API (`recover`, `reconcile`): its
 * address (`--base-url`, `--emulator` or the environment), its credential, and rate-limit notes.
 */
import { createCrmClient } from '../manage/crm-client.js';
import { createMailClient } from '../manage/mail-client.js';
import type { Clock } from '../shared/clock.js';
import { CRM_TEST_TOKEN } from '../testing/api/crm-api.js';
import { MAIL_TEST_API_KEY } from '../testing/api/mail-api.js';
import type { Service } from './events.js';
import { CliError, EXIT } from './exit-codes.js';
import { parseUrl } from './http.js';
import type { Output } from './output.js';

/** The options every such command takes. */
export interface ApiOptions {
  baseUrl?: string;
  emulator?: string;
  apiKey?: string;
  token?: string;
}

/** Environment variables of the management credentials and base URLs. */
const ENV = {
  mail: { url: 'SVC_MAIL_API_URL', credential: 'SVC_MAIL_API_KEY' },
  crm: { url: 'SVC_CRM_API_URL', credential: 'SVC_CRM_TOKEN' },
} as const;

/** The API's address: `--emulator`, `--base-url` or the service's variable. */
export function apiBase(service: Service, options: ApiOptions): string {
  const baseOption = options.emulator ?? options.baseUrl ?? process.env[ENV[service].url];
  if (!baseOption) {
    throw new CliError(
      'No API address.',
      EXIT.usage,
      'url_missing',
      `Pass --base-url, --emulator, or set ${ENV[service].url}.`,
    );
  }
  return parseUrl(baseOption, options.emulator ? '--emulator' : '--base-url');
}

/** The service's client, with the credential of the options, the environment or the emulator. */
export function createClient(
  service: Service,
  options: ApiOptions,
  base: string,
  clock: Clock | undefined,
  out: Output,
) {
  const common = {
    baseUrl: base.replace(/\/$/, ''),
    ...(clock ? { clock } : {}),
    onRateLimit: (wait: { waitMs: number; reason: string }) =>
      out.note(
        `rate limited (${wait.reason === '429' ? '429' : 'no calls left'}): waiting ${Math.ceil(wait.waitMs / 1000)} s`,
      ),
  };
  if (service === 'mail') {
    const apiKey =
      options.apiKey ??
      process.env[ENV.mail.credential] ??
      (options.emulator ? MAIL_TEST_API_KEY : undefined);
    if (!apiKey)
      throw new CliError(
        'No email API key.',
        EXIT.usage,
        'credential_missing',
        `Pass --api-key or set ${ENV.mail.credential}.`,
      );
    return createMailClient({ ...common, apiKey });
  }
  const token =
    options.token ?? process.env[ENV.crm.credential] ?? (options.emulator ? CRM_TEST_TOKEN : undefined);
  if (!token)
    throw new CliError(
      'No CRM token.',
      EXIT.usage,
      'credential_missing',
      `Pass --token or set ${ENV.crm.credential}.`,
    );
  return createCrmClient({ ...common, token });
}
