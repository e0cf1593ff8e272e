import type { SchemaApi } from '../shared/schema-api.js';
import { payloadFields } from './payload-fields.js';

// email-service §6: the payload fields of these five events are "not shown" beyond client_id (and
// reputation_dropped's rates). Only client_id is required; everything else is kept as sent.

/** The payload schemas of the account events, built with one zod API. */
export function accountPayloadSchemas(z: SchemaApi) {
  const { base } = payloadFields(z);
  return {
    /** Payload of `domain_verified`: a domain passed DNS verification. `domain` is a guess (not shown). */
    domain_verified: z.looseObject({ ...base('domain_verified'), domain: z.optional(z.string()) }),
    /** Payload of `ip_paused`: a sending IP was paused for reputation. `ip` is a guess (not shown). */
    ip_paused: z.looseObject({ ...base('ip_paused'), ip: z.optional(z.string()) }),
    /**
     * Payload of `reputation_dropped`: a sharp reputation drop of an IP, carrying bounce and complaint
     * rates. Their names are not shown in the spec: `bounce_rate` and `complaint_rate` are our choice,
     * optional numbers (docs/events.md).
     */
    reputation_dropped: z.looseObject({
      ...base('reputation_dropped'),
      ip: z.optional(z.string()),
      bounce_rate: z.optional(z.number()),
      complaint_rate: z.optional(z.number()),
    }),
    /** Payload of `billing_threshold_reached`: monthly usage crossed an alert threshold of the plan. */
    billing_threshold_reached: z.looseObject({ ...base('billing_threshold_reached') }),
    /** Payload of `incident_escalated`: a deliverability incident was escalated (operational alert). */
    incident_escalated: z.looseObject({ ...base('incident_escalated') }),
  };
}
