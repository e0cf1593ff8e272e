import * as z from 'zod';
import { define } from '../shared/define.js';
import { CRM_CAMPAIGN_COMPLETION_REASONS, id, knownString } from './data-fields.js';

// The `data` of campaign and journey events (crm-service §6). looseObject keeps unknown fields.

const count = /* @__PURE__ */ define(() => z.number().int().nonnegative());

/**
 * `data` of `campaign.completed`: `sent` and `failed` are message counts; known `reason` values
 * are listed in `CRM_CAMPAIGN_COMPLETION_REASONS`, any string is accepted.
 */
export const campaignCompletedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    campaign_id: id,
    name: z.string(),
    sent: count,
    failed: count,
    reason: knownString(CRM_CAMPAIGN_COMPLETION_REASONS),
  }),
);

const journeyFields = { journey_id: id, contact_id: id, enrollment_id: id };

/**
 * `data` of `journey.enrolled`: a contact was enrolled in a journey.
 */
export const journeyEnrolledDataSchema = /* @__PURE__ */ define(() => z.looseObject(journeyFields));

/**
 * `data` of `journey.completed`: a contact reached the end of a journey.
 */
export const journeyCompletedDataSchema = /* @__PURE__ */ define(() => z.looseObject(journeyFields));
