/**
 * One webhook secret, or several during a rotation (the new one first is customary; order only
 * decides which `secretIndex` is reported).
 *
 * @example
 * ```ts
 * import type { Secrets } from '@svc/webhooks/verify';
 *
 * const secrets: Secrets = [process.env.MAIL_SECRET_NEW!, process.env.MAIL_SECRET_OLD!];
 * ```
 */
export type Secrets = string | readonly string[];

/**
 * The shortest secret receivers and verifiers accept: 16 characters. The services' secrets are long
 * random strings (the testing emitters issue `whsec_` + 48 hex characters, 54 in all); anything
 * shorter is a placeholder or a truncated paste, and an HMAC key that short can be guessed offline
 * from a single captured delivery. Signing (`signPayload`) does not enforce it: a signature made with
 * a weak key endangers no one, and tests sign with arbitrary keys on purpose.
 *
 * @example
 * ```ts
 * import { MIN_SECRET_LENGTH } from '@svc/webhooks/verify';
 *
 * if (secret.length < MIN_SECRET_LENGTH) throw new Error('SVC_MAIL_WEBHOOK_SECRET looks truncated');
 * ```
 */
export const MIN_SECRET_LENGTH = 16;

/** Why a secret is unusable; the secret itself is never part of it. */
export type SecretProblem = { index: number; reason: string };

/**
 * The secrets as a list, and the first configuration problem: none given, one empty, one that is not
 * a string, one shorter than `minLength` (default {@link MIN_SECRET_LENGTH}), or one with surrounding
 * whitespace (a trailing newline from a `.env` file or a secret manager is the usual cause; the
 * services never issue such secrets). The reason names neither the secret nor its length.
 */
export function checkSecrets(
  secrets: Secrets,
  minLength = MIN_SECRET_LENGTH,
): { list: readonly string[]; problem: SecretProblem | null } {
  // Typed, but JavaScript callers pass anything: a lone non-string is reported as such, not as "none".
  const list: readonly unknown[] = Array.isArray(secrets) ? secrets : secrets == null ? [] : [secrets];
  if (list.length === 0) {
    return { list: [], problem: { index: -1, reason: 'no webhook secret was configured' } };
  }
  for (let index = 0; index < list.length; index++) {
    const secret = list[index];
    const label = list.length === 1 ? 'the webhook secret' : `webhook secret #${index + 1} of ${list.length}`;
    if (typeof secret !== 'string') {
      return { list: [], problem: { index, reason: `${label} is not a string (got ${typeof secret})` } };
    }
    if (secret.length === 0) return { list: [], problem: { index, reason: `${label} is empty` } };
    if (secret.trim() !== secret) {
      return {
        list: [],
        problem: {
          index,
          reason: `${label} has leading or trailing whitespace (often a newline from a .env file or secret manager); trim it`,
        },
      };
    }
    if (secret.length < minLength) {
      return {
        list: [],
        problem: {
          index,
          reason: `${label} is shorter than ${minLength} characters, too short to be a real webhook secret (a placeholder or a truncated value?); use the full secret the service issued`,
        },
      };
    }
  }
  return { list: list as readonly string[], problem: null };
}
