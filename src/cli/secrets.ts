/** Where a command's secret comes from: `--secret`, or the service's environment variable. */
import type { Service } from './events.js';
import { CliError } from './exit-codes.js';

/** The environment variable of each service's secret (the same names as the example apps). */
export const SECRET_ENV: Record<Service, string> = {
  mail: 'SVC_MAIL_WEBHOOK_SECRET',
  crm: 'SVC_CRM_WEBHOOK_SECRET',
};

/**
 * The secrets given with `--secret` (repeatable, during a rotation), else the environment variable's
 * value; a usage error naming both when there is none. The environment keeps secrets out of shell history.
 */
export function resolveSecrets(service: Service, given: readonly string[] | undefined): string[] {
  const list = (given ?? []).filter((s) => s.length > 0);
  if (list.length > 0) return list;
  const fromEnv = process.env[SECRET_ENV[service]];
  if (fromEnv) return [fromEnv];
  throw new CliError(
    `No ${service} webhook secret.`,
    undefined,
    'secret_missing',
    `Pass --secret <secret> or set ${SECRET_ENV[service]} (the environment keeps it out of your shell history).`,
  );
}
