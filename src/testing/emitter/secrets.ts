import { type Random, randomToken } from '../random.js';

const SECRET_PREFIX = 'whsec_';

/** A new webhook secret: `whsec_` and 24 random bytes in hex (the format is ours; not shown in the specs). */
export function generateSecret(random: Random): string {
  return randomToken(random, SECRET_PREFIX, 24);
}

/** The secret as later reads show it (email-service §2: "masked on later reads"): prefix and last 4. */
export function maskSecret(secret: string): string {
  return `${SECRET_PREFIX}${'*'.repeat(8)}${secret.slice(-4)}`;
}
