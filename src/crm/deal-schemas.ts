import * as z from 'zod';
import { define } from '../shared/define.js';
import { id } from './data-fields.js';

// The `data` of each deal event (crm-service §6). `value` is a number or null (a deal without a
// value); `contact_id` may be null (a deal without a contact). See docs/events.md.

const value = /* @__PURE__ */ define(() => z.number().nullable());

/**
 * `data` of `deal.created`.
 */
export const dealCreatedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    deal_id: id,
    title: z.string(),
    value,
    stage_id: id,
    contact_id: id.nullable(),
  }),
);

/**
 * `data` of `deal.stage_changed`: `stage_id` is the new stage.
 */
export const dealStageChangedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ deal_id: id, title: z.string(), stage_id: id }),
);

/**
 * `data` of `deal.won`.
 */
export const dealWonDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ deal_id: id, title: z.string(), value }),
);

/**
 * `data` of `deal.lost`.
 */
export const dealLostDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ deal_id: id, title: z.string() }),
);
