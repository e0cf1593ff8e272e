import * as z from 'zod';
import { define } from '../shared/define.js';
import { id } from './data-fields.js';

// The `data` of each deal event (crm-service §6). `value` is a number or null (a deal without a
// value); `contact_id` may be null (a deal without a contact). See docs/events.md.

const value = /* @__PURE__ */ define(() => z.number().nullable());

/**
 * `data` of `deal.created`.
 *
 * @example
 * ```ts
 * import { dealCreatedDataSchema } from '@svc/webhooks';
 *
 * const { deal_id, value, stage_id } = dealCreatedDataSchema.parse(envelope.data);
 * ```
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
 *
 * @example
 * ```ts
 * import { dealStageChangedDataSchema } from '@svc/webhooks';
 *
 * const { deal_id, stage_id } = dealStageChangedDataSchema.parse(envelope.data);
 * ```
 */
export const dealStageChangedDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ deal_id: id, title: z.string(), stage_id: id }),
);

/**
 * `data` of `deal.won`.
 *
 * @example
 * ```ts
 * import { dealWonDataSchema } from '@svc/webhooks';
 *
 * const { title, value } = dealWonDataSchema.parse(envelope.data);
 * ```
 */
export const dealWonDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ deal_id: id, title: z.string(), value }),
);

/**
 * `data` of `deal.lost`.
 *
 * @example
 * ```ts
 * import { dealLostDataSchema } from '@svc/webhooks';
 *
 * const { deal_id } = dealLostDataSchema.parse(envelope.data);
 * ```
 */
export const dealLostDataSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ deal_id: id, title: z.string() }),
);
