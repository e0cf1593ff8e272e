/**
 * @module
 * `@svc/webhooks`: receive the email and CRM services' webhooks safely. Web-standard only: receivers,
 * verifiers, errors, the memory dedup store and the event types.
 */

export { type CapturedDelivery, formatCaptureLine } from './core/capture.js';
export { isValidDeliveryId, MAX_DELIVERY_ID_LENGTH } from './core/delivery-id.js';
export { EVENT_CLOCK_SKEW_MS } from './core/event-age.js';
export { rawFields } from './core/fields.js';
export type {
  ErrorFacts,
  ErrorHook,
  ErrorInfo,
  ErrorPhase,
  HandlerContext,
  InvalidDelivery,
  InvalidHook,
  WebhookErrorPhase,
  WebhookHandler,
} from './core/handler-types.js';
export { jobError } from './core/handoff/run-job.js';
export {
  type EnqueueResult,
  HANDOFF_JOB_VERSION,
  type HandoffJob,
  type HandoffRunner,
  type HandoffTarget,
  type RunJobOptions,
} from './core/handoff/types.js';
export type { HandlerLog, LogEntry, LogFields, Logger, LogLevel } from './core/logger.js';
export {
  type BaseReceiverOptions,
  DEFAULT_LEASE_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_STORE_TIMEOUT_MS,
  DEFAULT_TIMEOUT_MS,
} from './core/receiver-options.js';
export type { BodyLimits, BodyReader, HeadersInput, ReceiveInput } from './core/receiver-types.js';
export { truncateUntrusted, UNTRUSTED_LOG_CHARS } from './core/untrusted.js';
export type { AcceptedVerdict, FailedVerdict, RefusedVerdict, Verdict } from './core/verdict.js';
export { type CrmDedupKey, crmDedupKeyOf, crmDeliveryKey } from './crm/dedup-key.js';
export * from './crm/index.js';
export type { CrmReceiver, CrmReceiverOptions } from './crm/receiver.js';
export { CRM_DEFAULT_TTL_MS, createCrmReceiver } from './crm/receiver.js';
export { boundDedupKey, DEDUP_KEY_HASH_ABOVE } from './dedup/bound-key.js';
export type { MemoryStore, MemoryStoreOptions } from './dedup/memory-store.js';
export { createMemoryStore, DEFAULT_MEMORY_STORE_MAX_KEYS } from './dedup/memory-store.js';
export type {
  AbandonOptions,
  ClaimOptions,
  ClaimResult,
  CompleteOptions,
  DedupStore,
  StoreCallOptions,
} from './dedup/types.js';
export { MAX_DEDUP_KEY_LENGTH } from './dedup/validate.js';
export { type MailDedupKey, mailDedupKeyOf, mailDeliveryKey } from './mail/dedup-key.js';
export * from './mail/index.js';
export type { MailReceiver, MailReceiverOptions } from './mail/receiver.js';
export { createMailReceiver, MAIL_DEFAULT_TTL_MS } from './mail/receiver.js';
export type { WebhookReceiver, WebhookReceiverLike } from './receiver/create-receiver.js';
export { type HttpAnswer, httpAnswer, toResponse } from './receiver/http-answer.js';
export { type Clock, systemClock } from './shared/clock.js';
export type { WebhookErrorCode, WebhookErrorOptions } from './shared/errors.js';
export { isWebhookError, WEBHOOK_ERROR_STATUS, WebhookError } from './shared/errors.js';
export * from './verify/index.js';
