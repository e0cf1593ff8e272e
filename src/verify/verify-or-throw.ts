/** Verification for the one-call `construct*Event` functions, which throw instead of returning a result. */
import { WebhookError } from '../shared/errors.js';
import type { Secrets } from './secrets.js';
import type { HeaderValue } from './signature-header.js';
import { verifySignature } from './verify-signature.js';

/** Verifies the signature over the exact bytes; throws the VerifyResult's code as a WebhookError. */
export async function verifyOrThrow(
  bytes: Uint8Array,
  header: HeaderValue,
  secrets: Secrets,
): Promise<number> {
  const result = await verifySignature(bytes, header, secrets);
  if (!result.ok) throw new WebhookError(result.code, result.message);
  return result.secretIndex;
}
