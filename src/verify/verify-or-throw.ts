/** Verification for the one-call `construct*Event` functions, which reject instead of returning a result. */
import { WebhookError } from '../shared/errors.js';
import { getNodeCrypto } from './node-crypto.js';
import type { Secrets } from './secrets.js';
import type { HeaderValue } from './signature-header.js';
import { type VerifyResult, verifySignature, verifySignatureSync } from './verify-signature.js';

function secretIndexOf(result: VerifyResult): number {
  if (!result.ok) throw new WebhookError(result.code, result.message);
  return result.secretIndex;
}

/**
 * Verifies the signature over the exact bytes, then runs `parse` with the index of the secret that
 * matched; a failed check rejects with the VerifyResult's code as a `WebhookError`. On `node:crypto`
 * the whole call runs synchronously and returns one settled promise (no await per step); on Web
 * Crypto it waits for the digests. Never throws: every failure is a rejection.
 */
export function verifyThen<T>(
  bytes: Uint8Array,
  header: HeaderValue,
  secrets: Secrets,
  parse: (secretIndex: number) => T,
): Promise<T> {
  if (getNodeCrypto() === null) {
    return verifySignature(bytes, header, secrets).then((result) => parse(secretIndexOf(result)));
  }
  try {
    return Promise.resolve(parse(secretIndexOf(verifySignatureSync(bytes, header, secrets))));
  } catch (error) {
    return Promise.reject(error);
  }
}
