/**
 * @module
 * `@svc/webhooks/schemas`: the zod schemas the receivers validate with, for validating a payload
 * you stored or building one in a test. Every schema is loose: fields a service adds later are kept.
 */
export {
  CRM_CAMPAIGN_COMPLETION_REASONS,
  CRM_UNSUBSCRIBE_CHANNELS,
  CRM_UNSUBSCRIBE_REASONS,
} from './crm/data-fields.js';
export { crmAnyEnvelopeSchema } from './crm/envelope.js';
export { crmDataSchemas, crmEnvelopeSchema, crmEnvelopeSchemas } from './crm/schemas.js';
export { jsonSchemas, type WebhookJsonSchemas } from './json-schemas.js';
export { mailEventSchema, mailPayloadSchemas } from './mail/schemas.js';
export type { JsonSchema } from './shared/json-schema.js';
