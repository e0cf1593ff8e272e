export { type ConstructCrmEventOptions, constructCrmEvent } from './construct-event.js';
export * from './contact-schemas.js';
export {
  CRM_CAMPAIGN_COMPLETION_REASONS,
  CRM_UNSUBSCRIBE_CHANNELS,
  CRM_UNSUBSCRIBE_REASONS,
} from './data-fields.js';
export * from './deal-schemas.js';
export * from './engagement-schemas.js';
export { crmAnyEnvelopeSchema } from './envelope.js';
export { CRM_EVENT_NAMES, type CrmEventName, isCrmEventName } from './event-names.js';
export { CRM_HEADER_NAMES, type CrmHeaderNames, resolveCrmHeaderNames } from './header-names.js';
export { type ParseCrmEventOptions, parseCrmEvent } from './parse-event.js';
export { crmDataSchemas, crmEnvelopeSchema, crmEnvelopeSchemas } from './schemas.js';
export type {
  CrmAnyEnvelope,
  CrmDataOf,
  CrmEnvelopeOf,
  CrmEvent,
  CrmEventOf,
  CrmWebhookEvent,
  UnknownCrmEvent,
} from './types.js';
