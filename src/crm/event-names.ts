/**
 * Every event the CRM service sends, in the order of crm-service §6 "Event names and data".
 *
 * @example
 * ```ts
 * import { CRM_EVENT_NAMES } from '@svc/webhooks';
 *
 * await registerWebhook({ url, events: [...CRM_EVENT_NAMES] });
 * ```
 */
export const CRM_EVENT_NAMES = [
  'contact.created',
  'form.submitted',
  'deal.stage_changed',
  'deal.won',
  'deal.lost',
  'contact.updated',
  'deal.created',
  'survey.responded',
  'campaign.completed',
  'journey.enrolled',
  'journey.completed',
  'contact.unsubscribed',
  'score.rule_fired',
] as const;

// One line per event for `svc-webhooks events` (crm-service §6 "Event names and data": when it
// fires, then its data fields). Internal: not re-exported by the package entries.
export const CRM_EVENT_DESCRIPTIONS: Readonly<Record<(typeof CRM_EVENT_NAMES)[number], string>> = {
  'contact.created': 'A contact was created (API or app). data: id, email, first_name, tags',
  'form.submitted': 'A CRM form was submitted. data: form_id, form_name, contact_id, data',
  'deal.stage_changed': 'A deal moved to another stage. data: deal_id, title, stage_id',
  'deal.won': 'A deal was marked as won. data: deal_id, title, value',
  'deal.lost': 'A deal was marked as lost. data: deal_id, title',
  'contact.updated': 'A contact changed (API or app). data: id, fields (the changed fields)',
  'deal.created': 'A deal was created. data: deal_id, title, value, stage_id, contact_id',
  'survey.responded': 'A survey (NPS or CSAT) was answered. data: survey_id, contact_id, score',
  'campaign.completed': 'A campaign finished. data: campaign_id, name, sent, failed, reason',
  'journey.enrolled': 'A contact was enrolled in a journey. data: journey_id, contact_id, enrollment_id',
  'journey.completed': 'A contact reached the end of a journey. data: journey_id, contact_id, enrollment_id',
  'contact.unsubscribed':
    'Unsubscribe by link, keyword or erasure request. data: contact_id, channel, reason',
  'score.rule_fired': 'A scoring rule was applied to a contact. data: the rule and the contact',
};

// One paragraph per event for its page of the docs site (scripts/docs/events.mts): what the event
// tells a receiver, in our words after crm-service §6. Internal: no entry imports it, so it is not
// in the package.
export const CRM_EVENT_MEANINGS: Readonly<Record<(typeof CRM_EVENT_NAMES)[number], string>> = {
  'contact.created':
    'A contact was created in the CRM, through the API or in the app. `email` and `first_name` may be null: a contact that came from a messaging channel need not have them.',
  'form.submitted':
    'Someone submitted a CRM form. `data` holds the submitted values by field; `contact_id` is the contact the submission was linked to, or null.',
  'deal.stage_changed':
    'A deal moved to another stage of its pipeline; `stage_id` is the stage it is in now.',
  'deal.won': 'A deal was marked as won. `value` is its amount, or null for a deal without one.',
  'deal.lost': 'A deal was marked as lost.',
  'contact.updated':
    'A contact changed, through the API or in the app. `fields` tells what changed: the spec does not say whether as an object of new values or as a list of field names, so both are accepted.',
  'deal.created': 'A deal was created, with its title, value (or null), stage and contact (or null).',
  'survey.responded':
    "A contact answered a survey, NPS or CSAT. `score` is the answer on the survey's own scale.",
  'campaign.completed':
    'A campaign finished: its sending ended, a limit was reached, its audience was empty or someone completed it by hand. `sent` and `failed` count its messages; `reason` says which end it met.',
  'journey.enrolled':
    'A contact was enrolled in a journey; `enrollment_id` names this enrollment, which `journey.completed` carries again.',
  'journey.completed': 'A contact reached the end of a journey it was enrolled in.',
  'contact.unsubscribed':
    'A contact unsubscribed: by the link of one channel, by sending the keyword `SAIR` on a messaging channel, or by an erasure at their request. `channel` may be absent or null for an erasure, which is not per channel.',
  'score.rule_fired':
    'A lead scoring rule was applied to a contact. The spec names no field ("the rule and the contact"): `rule_id`, `rule_name`, `contact_id`, `points` and `score` are ours, all optional.',
};

/**
 * The name of a CRM event this version of the library knows.
 *
 * @example
 * ```ts
 * import type { CrmEventName } from '@svc/webhooks';
 *
 * const deals: CrmEventName[] = ['deal.won', 'deal.lost'];
 * ```
 */
export type CrmEventName = (typeof CRM_EVENT_NAMES)[number];

const known: ReadonlySet<string> = /* @__PURE__ */ new Set(CRM_EVENT_NAMES);

/**
 * True when `name` is a CRM event this version knows; the services add events, so an
 * unknown name is normal and not an error.
 *
 * @example
 * ```ts
 * import { isCrmEventName } from '@svc/webhooks';
 *
 * if (isCrmEventName(name)) handlers[name]?.(envelope.data);
 * ```
 */
export function isCrmEventName(name: unknown): name is CrmEventName {
  return typeof name === 'string' && known.has(name);
}
