import type { SchemaApi } from '../shared/schema-api.js';
import { CRM_UNSUBSCRIBE_CHANNELS, CRM_UNSUBSCRIBE_REASONS, dataFields } from './data-fields.js';

// The `data` of each contact-related event (crm-service §6). looseObject keeps unknown fields.

/** The `data` schemas of the contact events, built with one zod API. */
export function contactDataSchemas(z: SchemaApi) {
  const { id, knownString } = dataFields(z);
  return {
    /**
     * `data` of `contact.created`. `email` and `first_name` may be null: a contact created from a
     * messaging channel need not have them (docs/events.md).
     */
    'contact.created': z.looseObject({
      id,
      email: z.nullable(z.string()),
      first_name: z.nullable(z.string()),
      tags: z.array(z.string()),
    }),
    /**
     * `data` of `contact.updated`. `fields` holds "the changed fields": an object of changed values or
     * a list of field names, both accepted (the spec does not show which).
     */
    'contact.updated': z.looseObject({
      id,
      fields: z.union([z.record(z.string(), z.unknown()), z.array(z.string())]),
    }),
    /**
     * `data` of `contact.unsubscribed`. `channel` may be absent or null (an erasure is not per channel);
     * known values of `channel` and `reason` are listed, any string is accepted.
     */
    'contact.unsubscribed': z.looseObject({
      contact_id: id,
      channel: z.nullish(knownString(CRM_UNSUBSCRIBE_CHANNELS)),
      reason: knownString(CRM_UNSUBSCRIBE_REASONS),
    }),
    /**
     * `data` of `form.submitted`: the form, the contact (null when none was linked) and the submitted
     * values as an object.
     */
    'form.submitted': z.looseObject({
      form_id: id,
      form_name: z.string(),
      contact_id: z.nullable(id),
      data: z.record(z.string(), z.unknown()),
    }),
    /**
     * `data` of `survey.responded` (NPS or CSAT). `score` is any number: NPS and CSAT use different
     * scales.
     */
    'survey.responded': z.looseObject({ survey_id: id, contact_id: id, score: z.number() }),
    /**
     * `data` of `score.rule_fired`: "the rule and the contact". The field names are not shown in the
     * spec: `rule_id`, `rule_name`, `contact_id`, `points` and `score` are our choice, all optional.
     */
    'score.rule_fired': z.looseObject({
      rule_id: z.optional(id),
      rule_name: z.optional(z.string()),
      contact_id: z.optional(id),
      /** Points the rule added (negative when it removed points). */
      points: z.optional(z.number()),
      /** The contact's score after the rule. */
      score: z.optional(z.number()),
    }),
  };
}
