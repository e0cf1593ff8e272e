import * as z from 'zod';
import { define } from '../shared/define.js';
import { isoTimestamp } from './data-fields.js';

/** The fields every CRM envelope has besides `event` and `data` (crm-service §2). */
export const envelopeFields = /* @__PURE__ */ define(() => ({
  /**
   * The delivery id: a UUID, equal to `X-Svc-Delivery`, the same across attempts. Checked as the
   * 8-4-4-4-12 hex form without insisting on an RFC version or variant: the spec says "UUID" only, and
   * a sender using another UUID version must not have every delivery refused.
   */
  id: z.guid(),
  timestamp: isoTimestamp,
  tenant_id: z.string(),
}));

/**
 * The envelope of any CRM delivery (crm-service §2), whatever its event: `data` is not validated.
 * Used for events this version does not know, so their id, tenant and timestamp are still checked.
 *
 * @example
 * ```ts
 * import { crmAnyEnvelopeSchema } from '@svc/webhooks/schemas';
 *
 * const { id, event, tenant_id } = crmAnyEnvelopeSchema.parse(JSON.parse(text));
 * ```
 */
export const crmAnyEnvelopeSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    ...envelopeFields,
    event: z.string(),
    data: z.unknown(),
  }),
);
