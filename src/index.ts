/**
 * @module
 * `@svc/webhooks`: receive the email and CRM services' webhooks safely. Web-standard only: receivers,
 * verifiers, errors, the memory dedup store and the event types.
 */
export { isWebhookError, WEBHOOK_ERROR_STATUS, WebhookError } from './core/errors.js';
export type { WebhookErrorCode, WebhookErrorOptions } from './core/errors.js';
export type {
  HeadersInput,
  ReceiveInput,
  ReceiveOutcome,
  ReceiveResult,
  WebhookReceiverLike,
} from './core/receiver-types.js';
export type { ClaimOptions, ClaimResult, Clock, CompleteOptions, DedupStore } from './dedup/types.js';
export { systemClock } from './dedup/types.js';
export * from './verify/index.js';
