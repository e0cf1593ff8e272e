/**
 * @module
 * `@svc/webhooks/manage`: typed clients of the two services' webhook-management APIs (fetch only, any
 * runtime; timeouts, `AbortSignal`, rate-limit backoff, errors as `WebhookError` from the root entry)
 * and `recoverFailedDeliveries`, which re-drives the deliveries that failed during an outage;
 * `createReconciler`, which checks on a schedule that every delivery reached the receiver.
 */

export { type CrmClient, type CrmClientOptions, createCrmClient } from './crm-client.js';
export type { CreateCrmWebhook, CrmDelivery, CrmWebhook, UpdateCrmWebhook } from './crm-types.js';
export type { CallOptions, HttpClientOptions, RateLimitWait } from './http-types.js';
export { createMailClient, type MailClient, type MailClientOptions } from './mail-client.js';
export type {
  CreateMailApiKey,
  CreateMailWebhook,
  MailApiKey,
  MailDeliveryAttempt,
  MailDeliveryPage,
  MailDeliveryQuery,
  MailIdentity,
  MailWebhook,
  UpdateMailWebhook,
} from './mail-types.js';
export type { DeliveryHolder, ReconcileItem, ReconcileReport, ReconcilerOptions } from './reconcile-types.js';
export { createReconciler } from './reconciler.js';
export { recoverFailedDeliveries } from './recovery.js';
export type {
  RecoveryGap,
  RecoveryItem,
  RecoveryOptions,
  RecoveryOutcome,
  RecoveryProgress,
  RecoveryReport,
  WebhookRecovery,
} from './recovery-types.js';
export type { RetryResult } from './retry-result.js';
export { createStoreHolder } from './store-holder.js';
