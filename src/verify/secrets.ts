/**
 * One webhook secret, or several during a rotation (the new one first is customary; order only
 * decides which `secretIndex` is reported).
 */
export type Secrets = string | readonly string[];

/** Why a secret is unusable; the secret itself is never part of it. */
export type SecretProblem = { index: number; reason: string };

/**
 * The secrets as a list, and the first configuration problem: none given, one empty, one that is not
 * a string, or one with surrounding whitespace (a trailing newline from a `.env` file or a secret
 * manager is the usual cause; the services never issue such secrets).
 */
export function checkSecrets(secrets: Secrets): { list: readonly string[]; problem: SecretProblem | null } {
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
  }
  return { list: list as readonly string[], problem: null };
}
