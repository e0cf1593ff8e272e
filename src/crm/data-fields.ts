import type * as z from 'zod';
import type { SchemaApi } from '../shared/schema-api.js';

/** The field types the CRM schemas share (crm-service §2, §6), built with one zod API. */
export function dataFields(z: SchemaApi) {
  return {
    // crm-service §2: "ISO 8601 UTC with milliseconds". UTC (`Z`) is required; any fractional
    // precision is accepted, so a timestamp without milliseconds is not a lost event.
    isoTimestamp: z.isoDatetime(),
    // crm-service §6 does not show the types of data fields. Identifiers are strings, like the
    // envelope's id and tenant_id (§2); see docs/events.md.
    id: z.string(),
    /**
     * A string whose known values are offered by the editor, while any other string is accepted: the
     * spec does not list the allowed values, and the service may send values we do not know.
     */
    knownString<const T extends readonly string[]>(_known: T) {
      return z.string() as unknown as z.ZodType<T[number] | (string & {}), string>;
    },
  };
}

/**
 * Known values of `contact.unsubscribed` `channel` (crm-service §6: "per channel", the keyword on a
 * messaging channel). Any other string is accepted too.
 *
 * @example
 * ```ts
 * import { CRM_UNSUBSCRIBE_CHANNELS } from '@svc/webhooks/schemas';
 *
 * CRM_UNSUBSCRIBE_CHANNELS.includes(data.channel as never);
 * ```
 */
export const CRM_UNSUBSCRIBE_CHANNELS = ['email', 'sms', 'whatsapp'] as const;

/**
 * Known values of `contact.unsubscribed` `reason` (crm-service §6: the link, the keyword `SAIR`, or
 * erasure at the data subject's request). Any other string is accepted too.
 *
 * @example
 * ```ts
 * import { CRM_UNSUBSCRIBE_REASONS } from '@svc/webhooks/schemas';
 *
 * if (data.reason === 'erasure') await eraseContact(data.contact_id);
 * ```
 */
export const CRM_UNSUBSCRIBE_REASONS = ['link', 'keyword', 'erasure'] as const;

/**
 * Known values of `campaign.completed` `reason` (crm-service §6: end of sending, limit reached, empty
 * audience or manual completion). Any other string is accepted too.
 *
 * @example
 * ```ts
 * import { CRM_CAMPAIGN_COMPLETION_REASONS } from '@svc/webhooks/schemas';
 *
 * if (data.reason === 'limit_reached') notifySales(data.campaign_id);
 * ```
 */
export const CRM_CAMPAIGN_COMPLETION_REASONS = [
  'finished',
  'limit_reached',
  'empty_audience',
  'manual',
] as const;
