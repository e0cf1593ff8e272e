import { eventJsonSchemas, headersJsonSchema, signatureHeader, toJsonSchema } from '../shared/json-schema.js';
import { crmAnyEnvelopeSchema } from './envelope.js';
import { CRM_EVENT_DESCRIPTIONS, CRM_EVENT_NAMES } from './event-names.js';
import { CRM_HEADER_NAMES } from './header-names.js';
import { crmEnvelopeSchemas } from './schemas.js';

/**
 * The CRM's deliveries as JSON Schema: the request headers, the envelope of any event
 * (`crmAnyEnvelopeSchema`) and the whole envelope of every event (`crmEnvelopeSchemas`).
 */
export function crmJsonSchemas() {
  const envelopes = eventJsonSchemas(CRM_EVENT_NAMES, crmEnvelopeSchemas, CRM_EVENT_DESCRIPTIONS, [
    'Crm',
    'Envelope',
  ]);
  const envelope = toJsonSchema(
    crmAnyEnvelopeSchema,
    'CrmEnvelope',
    'The envelope of every CRM delivery (crm-service §2); `data` depends on the event.',
  );
  // crm-service §6 "Request headers of each delivery".
  const headers = headersJsonSchema('CrmHeaders', 'Request headers of every CRM delivery.', {
    'Content-Type': { description: 'application/json', pattern: /^application\/json/ },
    [CRM_HEADER_NAMES.signature]: signatureHeader('; the whole value is compared'),
    [CRM_HEADER_NAMES.event]: { description: "The event name, equal to the body's `event`." },
    [CRM_HEADER_NAMES.deliveryId]: {
      description: "The delivery id, equal to the body's `id`; the same across every attempt.",
    },
    'User-Agent': { description: 'Svc-CRM-Webhook/1.0: the version of the webhooks (crm-service §9).' },
  });
  return { headers, envelope, envelopes };
}
