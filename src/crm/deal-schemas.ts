import type { SchemaApi } from '../shared/schema-api.js';
import { dataFields } from './data-fields.js';

// The `data` of each deal event (crm-service §6). `value` is a number or null (a deal without a
// value); `contact_id` may be null (a deal without a contact). See docs/events.md.

/** The `data` schemas of the deal events, built with one zod API. */
export function dealDataSchemas(z: SchemaApi) {
  const { id } = dataFields(z);
  const value = z.nullable(z.number());
  return {
    /** `data` of `deal.created`. */
    'deal.created': z.looseObject({
      deal_id: id,
      title: z.string(),
      value,
      stage_id: id,
      contact_id: z.nullable(id),
    }),
    /** `data` of `deal.stage_changed`: `stage_id` is the new stage. */
    'deal.stage_changed': z.looseObject({ deal_id: id, title: z.string(), stage_id: id }),
    /** `data` of `deal.won`. */
    'deal.won': z.looseObject({ deal_id: id, title: z.string(), value }),
    /** `data` of `deal.lost`. */
    'deal.lost': z.looseObject({ deal_id: id, title: z.string() }),
  };
}
