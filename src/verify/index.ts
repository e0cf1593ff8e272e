/**
 * @module
 * `@svc/webhooks/verify`: sign and verify the services' `sha256=` HMAC-SHA256 signatures over raw
 * bytes, on Node and on Web Crypto runtimes. No zod, no framework.
 */

export {
  isWebhookError,
  WEBHOOK_ERROR_STATUS,
  WebhookError,
  type WebhookErrorCode,
} from '../shared/errors.js';
export { type RawBody, toBytes } from './bytes.js';
export { MIN_SECRET_LENGTH, type Secrets } from './secrets.js';
export { signPayload, signPayloadSync } from './sign-payload.js';
export { type HeaderValue, SIGNATURE_PREFIX } from './signature-header.js';
export { timingSafeEqual } from './timing-safe-equal.js';
export {
  type VerifyFailureCode,
  type VerifyResult,
  verifySignature,
  verifySignatureSync,
} from './verify-signature.js';
