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
