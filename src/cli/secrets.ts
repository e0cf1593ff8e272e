/** Where a command's secret comes from: `--secret`, or the service's environment variable. */
import { checkSecrets, MIN_SECRET_LENGTH } from '../verify/secrets.js';
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

/** Where the secrets of {@link resolveSecrets} came from, for messages: `--secret` or the variable. */
function origin(service: Service, given: readonly string[] | undefined): string {
  return (given ?? []).some((s) => s.length > 0) ? '--secret' : SECRET_ENV[service];
}

/**
 * Why no receiver would accept these secrets (`secret_invalid`: under {@link MIN_SECRET_LENGTH}
 * characters, or with surrounding whitespace), naming where they came from; undefined when usable.
 * Never the secret itself.
 */
export function secretProblem(
  service: Service,
  secrets: readonly string[],
  given: readonly string[] | undefined,
): string | undefined {
  const { problem } = checkSecrets(secrets);
  return problem ? `${origin(service, given)}: ${problem.reason}` : undefined;
}

/** The fix printed with a secret no receiver accepts. */
export const SECRET_FIX = `Use the whole secret the service issued (at least ${MIN_SECRET_LENGTH} characters, no surrounding whitespace); for local tests, e.g. $(openssl rand -hex 24).`;

/** {@link resolveSecrets}, refused with exit 2 (`secret_invalid`) when no receiver would accept them. */
export function usableSecrets(service: Service, given: readonly string[] | undefined): string[] {
  const secrets = resolveSecrets(service, given);
  const problem = secretProblem(service, secrets, given);
  if (problem) throw new CliError(`${problem}.`, undefined, 'secret_invalid', SECRET_FIX);
  return secrets;
}
