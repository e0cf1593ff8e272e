import { WebhookError } from '../shared/errors.js';
import { type RawBody, toBytes } from './bytes.js';
import { hmacHex, hmacHexSync } from './hmac.js';
import { checkSecrets } from './secrets.js';
import { SIGNATURE_PREFIX } from './signature-header.js';

function checkSecret(secret: string): void {
  // Signing takes exactly one secret; a list (even of one) is a caller mistake, not a rotation.
  if (Array.isArray(secret)) {
    throw new WebhookError('secret_invalid', 'Cannot sign: pass one secret string, not a list of secrets.');
  }
  // No minimum length here (MIN_SECRET_LENGTH guards verification): a weak signing key harms no one.
  const { problem } = checkSecrets(secret, 1);
  if (problem) throw new WebhookError('secret_invalid', `Cannot sign: ${problem.reason}.`);
}

/**
 * The signature header value the services send for `body`: `sha256=` + lowercase hex HMAC-SHA256 of
 * the exact bytes, keyed with `secret`. Runs on Node and on Web Crypto runtimes.
 *
 * @example
 * ```ts
 * import { signPayload } from '@svc/webhooks/verify';
 *
 * const body = JSON.stringify({ event: 'delivered', client_id: 'c_1' });
 * const signature = await signPayload(body, 'whsec_test');
 * await fetch(url, { method: 'POST', body, headers: { 'X-SvcMAIL-Sig': signature } });
 * ```
 */
export async function signPayload(body: RawBody, secret: string): Promise<string> {
  checkSecret(secret);
  return SIGNATURE_PREFIX + (await hmacHex(secret, toBytes(body)));
}

/**
 * Synchronous {@link signPayload}, for Node (and Bun/Deno) only; throws `crypto_unavailable` elsewhere.
 *
 * @example
 * ```ts
 * import { signPayloadSync } from '@svc/webhooks/verify';
 *
 * const signature = signPayloadSync(Buffer.from('{"event":"delivered"}'), 'whsec_test');
 * ```
 */
export function signPayloadSync(body: RawBody, secret: string): string {
  checkSecret(secret);
  return SIGNATURE_PREFIX + hmacHexSync(secret, toBytes(body));
}
