import type { SchemaApi } from '../shared/schema-api.js';
import { CRM_CAMPAIGN_COMPLETION_REASONS, dataFields } from './data-fields.js';

// The `data` of campaign and journey events (crm-service §6). looseObject keeps unknown fields.

/** The `data` schemas of the campaign and journey events, built with one zod API. */
export function engagementDataSchemas(z: SchemaApi) {
  const { id, knownString } = dataFields(z);
  const count = z.number().check(z.int(), z.nonnegative());
  const journeyFields = { journey_id: id, contact_id: id, enrollment_id: id };
  return {
    /**
     * `data` of `campaign.completed`: `sent` and `failed` are message counts; known `reason` values
     * are listed in `CRM_CAMPAIGN_COMPLETION_REASONS`, any string is accepted.
     */
    'campaign.completed': z.looseObject({
      campaign_id: id,
      name: z.string(),
      sent: count,
      failed: count,
      reason: knownString(CRM_CAMPAIGN_COMPLETION_REASONS),
    }),
    /** `data` of `journey.enrolled`: a contact was enrolled in a journey. */
    'journey.enrolled': z.looseObject(journeyFields),
    /** `data` of `journey.completed`: a contact reached the end of a journey. */
    'journey.completed': z.looseObject(journeyFields),
  };
}
