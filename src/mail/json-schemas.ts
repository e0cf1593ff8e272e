import { MAX_DELIVERY_ID_LENGTH } from '../core/delivery-id.js';
import { eventJsonSchemas, headersJsonSchema, signatureHeader } from '../shared/json-schema.js';
import { MAIL_EVENT_DESCRIPTIONS, MAIL_EVENT_NAMES } from './event-names.js';
import { MAIL_HEADER_NAMES } from './header-names.js';
import { mailPayloadSchemas } from './schemas.js';

/**
 * The email service's deliveries as JSON Schema: the request headers, and the payload of every event
 * converted from `mailPayloadSchemas`.
 */
export function mailJsonSchemas() {
  const payloads = eventJsonSchemas(MAIL_EVENT_NAMES, mailPayloadSchemas, MAIL_EVENT_DESCRIPTIONS, [
    'Mail',
    'Payload',
  ]);
  // email-service §6 "Request headers of each delivery".
  const headers = headersJsonSchema('MailHeaders', 'Request headers of every email-service delivery.', {
    [MAIL_HEADER_NAMES.event]: { description: 'The event name.' },
    [MAIL_HEADER_NAMES.signature]: signatureHeader(),
    [MAIL_HEADER_NAMES.deliveryId]: {
      description: `Identifies the delivery, the same across its retries: 1 to ${MAX_DELIVERY_ID_LENGTH} visible ASCII characters.`,
      pattern: new RegExp(`^[!-~]{1,${MAX_DELIVERY_ID_LENGTH}}$`),
    },
  });
  return { headers, payloads };
}
