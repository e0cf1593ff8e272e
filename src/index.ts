/**
 * @module
 * `@svc/webhooks`: receive the email and CRM services' webhooks safely. Web-standard only: the
 * receivers and their options, the verdict and its HTTP answer, the event types, the error type, the
 * memory dedup store and the store contract. Signing and verifying alone: `@svc/webhooks/verify`;
 * the zod schemas: `@svc/webhooks/schemas`; adapters, stores, queue engines and OpenTelemetry
 * (`@svc/webhooks/otel`): their own subpaths.
 */

export { type CapturedDelivery, formatCaptureLine } from './core/capture.js';
export type { KnownFields } from './core/fields.js';
export { rawFields } from './core/fields.js';
export type {
  ErrorHook,
  ErrorInfo,
  ErrorPhase,
  HandlerContext,
  InvalidDelivery,
  InvalidHook,
  WebhookErrorPhase,
  WebhookHandler,
} from './core/handler-types.js';
export type { HeaderNames } from './core/header-names.js';
export type { HandlerLog, LogEntry, LogFields, Logger, LogLevel } from './core/logger.js';
export type { Outcome } from './core/outcome.js';
export type { BodyLimits, BodyReader, HeadersInput, ReceiveInput } from './core/receiver-types.js';
export type { SecretRequest, SecretResolver } from './core/route-secrets.js';
export type { Telemetry } from './core/telemetry.js';
export type { FailedVerdict, RefusedVerdict, Verdict, VerdictFacts } from './core/verdict.js';
export { type ConstructCrmEventOptions, constructCrmEvent } from './crm/construct-event.js';
export type { CrmDedupKey } from './crm/dedup-key.js';
export { CRM_EVENT_NAMES, type CrmEventName, isCrmEventName } from './crm/event-names.js';
export type { CrmHeaderNames } from './crm/header-names.js';
export type { ParseCrmEventOptions } from './crm/parse-event.js';
export { type CrmReceiver, type CrmReceiverOptions, createCrmReceiver } from './crm/receiver.js';
export type { CrmRepairs } from './crm/repair.js';
export type {
  CrmAnyEnvelope,
  CrmDataOf,
  CrmEnvelopeOf,
  CrmEvent,
  CrmEventOf,
  CrmWebhookEvent,
  KnownEnvelope,
  UnknownCrmEvent,
} from './crm/types.js';
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from './dedup/memory-store.js';
export type {
  AbandonOptions,
  ClaimOptions,
  ClaimResult,
  CompleteOptions,
  DedupStore,
  StoreCallOptions,
} from './dedup/types.js';
export type { HandoffTarget } from './handoff/job/types.js';
export { jobError } from './handoff/job-action.js';
export { type ConstructMailEventOptions, constructMailEvent } from './mail/construct-event.js';
export type { MailDedupKey } from './mail/dedup-key.js';
export { isMailEventName, MAIL_EVENT_NAMES, type MailEventName } from './mail/event-names.js';
export type { MailHeaderNames } from './mail/header-names.js';
export type { ParseMailEventOptions } from './mail/parse-event.js';
export { createMailReceiver, type MailReceiver, type MailReceiverOptions } from './mail/receiver.js';
export type { MailRepairs } from './mail/repair.js';
export type {
  MailEvent,
  MailEventOf,
  MailPayloadOf,
  MailWebhookEvent,
  UnknownMailEvent,
} from './mail/types.js';
export type { WebhookReceiver, WebhookReceiverLike } from './receiver/create-receiver.js';
export { type HttpAnswer, httpAnswer, toResponse } from './receiver/http-answer.js';
export type { ReceiverOptions } from './receiver/receiver-options.js';
export type { Clock } from './shared/clock.js';
export type { WebhookErrorOptions } from './shared/errors.js';
export {
  isWebhookError,
  WEBHOOK_ERROR_STATUS,
  WebhookError,
  type WebhookErrorCode,
} from './shared/errors.js';
