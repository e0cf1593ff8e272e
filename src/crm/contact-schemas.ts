import * as z from 'zod';
import { define } from '../shared/define.js';
import { CRM_UNSUBSCRIBE_CHANNELS, CRM_UNSUBSCRIBE_REASONS, id, knownString } from './data-fields.js';

// The `data` of each contact-related event (crm-service §6). looseObject keeps unknown fields.

/**
 * `data` of `contact.created`. `email` and `first_name` may be null: a contact created from a
 * messaging channel need not have them (docs/events.md).
 */
export const contactCreatedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    id,
    email: z.string().nullable(),
    first_name: z.string().nullable(),
    tags: z.array(z.string()),
  }),
);

/**
 * `data` of `contact.updated`. `fields` holds "the changed fields": an object of changed values or
 * a list of field names, both accepted (the spec does not show which).
 */
export const contactUpdatedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    id,
    fields: z.union([z.record(z.string(), z.unknown()), z.array(z.string())]),
  }),
);

/**
 * `data` of `contact.unsubscribed`. `channel` may be absent or null (an erasure is not per channel);
 * known values of `channel` and `reason` are listed, any string is accepted.
 */
export const contactUnsubscribedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    contact_id: id,
    channel: knownString(CRM_UNSUBSCRIBE_CHANNELS).nullish(),
    reason: knownString(CRM_UNSUBSCRIBE_REASONS),
  }),
);

/**
 * `data` of `form.submitted`: the form, the contact (null when none was linked) and the submitted
 * values as an object.
 */
export const formSubmittedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    form_id: id,
    form_name: z.string(),
    contact_id: id.nullable(),
    data: z.record(z.string(), z.unknown()),
  }),
);

/**
 * `data` of `survey.responded` (NPS or CSAT). `score` is any number: NPS and CSAT use different
 * scales.
 */
export const surveyRespondedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ survey_id: id, contact_id: id, score: z.number() }),
);

/**
 * `data` of `score.rule_fired`: "the rule and the contact". The field names are not shown in the
 * spec: `rule_id`, `rule_name`, `contact_id`, `points` and `score` are our choice, all optional.
 */
export const scoreRuleFiredDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    rule_id: id.optional(),
    rule_name: z.string().optional(),
    contact_id: id.optional(),
    /** Points the rule added (negative when it removed points). */
    points: z.number().optional(),
    /** The contact's score after the rule. */
    score: z.number().optional(),
  }),
);
