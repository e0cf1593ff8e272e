/**
 * @module
 * `@svc/webhooks/testing`: a reference emitter of both services on a virtual clock, fixtures, a
 * signed-request helper, the services' webhook-management APIs as `Request => Response` functions,
 * the dedup store contract to run on a store of your own, and the database inbox's contract to run
 * on your own inbox setup. For tests and demos only: nothing
 * else in the package imports it. It needs only zod; the msw handlers of the management APIs live
 * in `@svc/webhooks/testing/msw`, the one entry that needs the optional peer `msw`.
 */

// Types the factories' results name, so that a `declaration: true` module importing only this entry
// can print them: the payload types of the fixtures and the clock the emitters take.
export type { KnownFields } from '../core/fields.js';
export type { CrmEnvelopeOf } from '../crm/types.js';
export type { Clock } from '../shared/clock.js';
export {
  CRM_TEST_TOKEN,
  type CrmApi,
  type CrmApiOptions,
  createCrmApi,
} from './api/crm-api.js';
export {
  createMailApi,
  MAIL_TEST_API_KEY,
  type MailApi,
  type MailApiOptions,
} from './api/mail-api.js';
export type { MailApiCredential, MailApiScope } from './api/mail-api-types.js';
export { createRealClock } from './clock/real-clock.js';
export type { VirtualClockOptions } from './clock/virtual-clock.js';
export { createVirtualClock, type VirtualClock } from './clock/virtual-clock.js';
export type { InProcessHandler, TransportOptions } from './emitter/attempt.js';
export { type CrmEmitter, createCrmEmitter } from './emitter/crm-emitter.js';
export type {
  CreateCrmWebhookInput,
  CrmDeliverySummary,
  CrmEmitterOptions,
  CrmEmitterWebhook,
  UpdateCrmWebhookInput,
} from './emitter/crm-types.js';
export { createMailEmitter, type MailEmitter } from './emitter/mail-emitter.js';
export type {
  CreateMailWebhookInput,
  MailEmitterOptions,
  MailEmitterWebhook,
  UpdateMailWebhookInput,
} from './emitter/mail-types.js';
export type {
  AttemptKind,
  EmittedAttempt,
  EmittedDelivery,
  EmittedDeliveryStatus,
  EmitterOptions,
  EmitterReport,
} from './emitter/types.js';
export type { FixturesOptions } from './fixtures/fixtures.js';
export {
  createFixtures,
  crmData,
  type EnvelopeOverrides,
  type Fixtures,
  mailPayload,
} from './fixtures/fixtures.js';
export type { Overrides } from './fixtures/overrides.js';
export type {
  SignedCrmRequestOptions,
  SignedMailRequestOptions,
  SignedRequestCommon,
} from './fixtures/signed-request.js';
export { createSignedRequest } from './fixtures/signed-request.js';
export { type InboxContractOptions, inboxContract } from './inbox-contract/contract.js';
export type { InboxContractEffects } from './inbox-contract/types.js';
export { type StoreContractOptions, storeContract } from './store-contract/contract.js';
export type { UrlPolicyOptions } from './url-policy.js';
