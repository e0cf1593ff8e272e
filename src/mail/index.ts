export * from './account-schemas.js';
export { type ConstructMailEventOptions, constructMailEvent } from './construct-event.js';
export {
  isMailEventName,
  MAIL_EVENT_NAMES,
  MAIL_SENDING_EVENT_NAMES,
  type MailEventName,
  type MailSendingEventName,
} from './event-names.js';
export { MAIL_HEADER_NAMES, type MailHeaderNames, resolveMailHeaderNames } from './header-names.js';
export * from './message-schemas.js';
export { type ParseMailEventOptions, parseMailEvent } from './parse-event.js';
export { mailEventSchema, mailPayloadSchemas } from './schemas.js';
export type {
  MailEvent,
  MailEventOf,
  MailPayloadOf,
  MailWebhookEvent,
  UnknownMailEvent,
} from './types.js';
