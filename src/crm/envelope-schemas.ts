import type * as z from 'zod';
import type { SchemaApi } from '../shared/schema-api.js';
import { contactDataSchemas } from './contact-schemas.js';
import { dataFields } from './data-fields.js';
import { dealDataSchemas } from './deal-schemas.js';
import { engagementDataSchemas } from './engagement-schemas.js';
import type { CrmEventName } from './event-names.js';

// No runtime import of zod here: the receivers build these with `zod/mini` and must not load full zod.

/**
 * The `data` schema of every CRM event, built with one zod API: full zod for `@svc/webhooks/schemas`
 * (src/crm/schemas.ts), `zod/mini` for the receivers' own parse (src/crm/parse-schemas.ts).
 */
export function buildCrmDataSchemas(api: SchemaApi) {
  const contact = contactDataSchemas(api);
  const deal = dealDataSchemas(api);
  const engagement = engagementDataSchemas(api);
  return {
    'contact.created': contact['contact.created'],
    'form.submitted': contact['form.submitted'],
    'deal.stage_changed': deal['deal.stage_changed'],
    'deal.won': deal['deal.won'],
    'deal.lost': deal['deal.lost'],
    'contact.updated': contact['contact.updated'],
    'deal.created': deal['deal.created'],
    'survey.responded': contact['survey.responded'],
    'campaign.completed': engagement['campaign.completed'],
    'journey.enrolled': engagement['journey.enrolled'],
    'journey.completed': engagement['journey.completed'],
    'contact.unsubscribed': contact['contact.unsubscribed'],
    'score.rule_fired': contact['score.rule_fired'],
  } as const satisfies { readonly [N in CrmEventName]: z.ZodType };
}

type CrmDataSchemas = ReturnType<typeof buildCrmDataSchemas>;

/** The fields every CRM envelope has besides `event` and `data` (crm-service §2). */
function envelopeFields(z: SchemaApi) {
  return {
    /**
     * The delivery id: a UUID, equal to `X-Svc-Delivery`, the same across attempts. Checked as the
     * 8-4-4-4-12 hex form without insisting on an RFC version or variant: the spec says "UUID" only, and
     * a sender using another UUID version must not have every delivery refused.
     */
    id: z.guid(),
    timestamp: dataFields(z).isoTimestamp,
    tenant_id: z.string(),
  };
}

/**
 * The whole envelope (crm-service §2) of every CRM event, by name, around the given `data` schemas
 * (built with the same API).
 */
export function buildCrmEnvelopeSchemas(z: SchemaApi, data: CrmDataSchemas) {
  const fields = envelopeFields(z);
  const envelopeOf = <N extends CrmEventName>(name: N) =>
    z.looseObject({ ...fields, event: z.literal(name), data: data[name] });
  return {
    'contact.created': envelopeOf('contact.created'),
    'form.submitted': envelopeOf('form.submitted'),
    'deal.stage_changed': envelopeOf('deal.stage_changed'),
    'deal.won': envelopeOf('deal.won'),
    'deal.lost': envelopeOf('deal.lost'),
    'contact.updated': envelopeOf('contact.updated'),
    'deal.created': envelopeOf('deal.created'),
    'survey.responded': envelopeOf('survey.responded'),
    'campaign.completed': envelopeOf('campaign.completed'),
    'journey.enrolled': envelopeOf('journey.enrolled'),
    'journey.completed': envelopeOf('journey.completed'),
    'contact.unsubscribed': envelopeOf('contact.unsubscribed'),
    'score.rule_fired': envelopeOf('score.rule_fired'),
  } as const satisfies { readonly [N in CrmEventName]: z.ZodType };
}

/**
 * The envelope of any CRM delivery (crm-service §2), whatever its event: `data` is not validated.
 * Used for events this version does not know, so their id, tenant and timestamp are still checked.
 */
export function buildCrmAnyEnvelopeSchema(z: SchemaApi) {
  return z.looseObject({ ...envelopeFields(z), event: z.string(), data: z.unknown() });
}
