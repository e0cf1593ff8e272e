import * as z from 'zod';
import { define } from '../shared/define.js';
import {
  contactCreatedDataSchema,
  contactUnsubscribedDataSchema,
  contactUpdatedDataSchema,
  formSubmittedDataSchema,
  scoreRuleFiredDataSchema,
  surveyRespondedDataSchema,
} from './contact-schemas.js';
import {
  dealCreatedDataSchema,
  dealLostDataSchema,
  dealStageChangedDataSchema,
  dealWonDataSchema,
} from './deal-schemas.js';
import {
  campaignCompletedDataSchema,
  journeyCompletedDataSchema,
  journeyEnrolledDataSchema,
} from './engagement-schemas.js';
import { envelopeFields } from './envelope.js';
import type { CrmEventName } from './event-names.js';

/**
 * The `data` schema of every known CRM event, by name.
 *
 * @example
 * ```ts
 * import { crmDataSchemas } from '@svc/webhooks/schemas';
 *
 * const result = crmDataSchemas['deal.won'].safeParse(envelope.data);
 * ```
 */
export const crmDataSchemas = {
  'contact.created': contactCreatedDataSchema,
  'form.submitted': formSubmittedDataSchema,
  'deal.stage_changed': dealStageChangedDataSchema,
  'deal.won': dealWonDataSchema,
  'deal.lost': dealLostDataSchema,
  'contact.updated': contactUpdatedDataSchema,
  'deal.created': dealCreatedDataSchema,
  'survey.responded': surveyRespondedDataSchema,
  'campaign.completed': campaignCompletedDataSchema,
  'journey.enrolled': journeyEnrolledDataSchema,
  'journey.completed': journeyCompletedDataSchema,
  'contact.unsubscribed': contactUnsubscribedDataSchema,
  'score.rule_fired': scoreRuleFiredDataSchema,
} as const satisfies { readonly [N in CrmEventName]: z.ZodType };

function envelopeOf<N extends CrmEventName>(name: N) {
  return z.looseObject({ ...envelopeFields, event: z.literal(name), data: crmDataSchemas[name] });
}

/**
 * The whole envelope schema (crm-service §2) of every known CRM event, by name: the parser's one
 * lookup per request (no union parse on the hot path).
 *
 * @example
 * ```ts
 * import { crmEnvelopeSchemas } from '@svc/webhooks/schemas';
 *
 * const envelope = crmEnvelopeSchemas['contact.created'].parse(JSON.parse(text));
 * ```
 */
export const crmEnvelopeSchemas = /* @__PURE__ */ define(
  () =>
    ({
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
    }) as const satisfies { readonly [N in CrmEventName]: z.ZodType },
);

/**
 * A known CRM envelope, discriminated on `event`: for validating stored or queued envelopes (the
 * parser itself looks the schema up by name instead).
 *
 * @example
 * ```ts
 * import { crmEnvelopeSchema } from '@svc/webhooks/schemas';
 *
 * const envelope = crmEnvelopeSchema.parse(JSON.parse(text));
 * if (envelope.event === 'deal.won') envelope.data.value;
 * ```
 */
export const crmEnvelopeSchema = /* @__PURE__ */ define(() =>
  z.discriminatedUnion('event', [
    crmEnvelopeSchemas['contact.created'],
    crmEnvelopeSchemas['form.submitted'],
    crmEnvelopeSchemas['deal.stage_changed'],
    crmEnvelopeSchemas['deal.won'],
    crmEnvelopeSchemas['deal.lost'],
    crmEnvelopeSchemas['contact.updated'],
    crmEnvelopeSchemas['deal.created'],
    crmEnvelopeSchemas['survey.responded'],
    crmEnvelopeSchemas['campaign.completed'],
    crmEnvelopeSchemas['journey.enrolled'],
    crmEnvelopeSchemas['journey.completed'],
    crmEnvelopeSchemas['contact.unsubscribed'],
    crmEnvelopeSchemas['score.rule_fired'],
  ]),
);
