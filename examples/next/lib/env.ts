import { MIN_SECRET_LENGTH } from '@svc/webhooks/verify';

/** The variables this app reads: each service's webhook secret. */
export const SECRET_VARIABLES = ['SVC_MAIL_WEBHOOK_SECRET', 'SVC_CRM_WEBHOOK_SECRET'] as const;

/**
 * Why a webhook secret from the environment is unusable, in words that name the variable; undefined
 * when it is fine. The receivers refuse a secret under MIN_SECRET_LENGTH (16) characters.
 */
export function secretProblem(name: string, value: string | undefined): string | undefined {
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

/** One line per missing or unusable secret; empty when the app can start. */
export function envProblems(): string[] {
  return SECRET_VARIABLES.flatMap((name) => secretProblem(name, process.env[name]) ?? []);
}

/** The secret, or an error naming the variable (instrumentation.ts has checked it at start-up). */
export function secretFromEnv(name: (typeof SECRET_VARIABLES)[number]): string {
  const problem = secretProblem(name, process.env[name]);
  if (problem) throw new Error(problem);
  return process.env[name]!;
}
