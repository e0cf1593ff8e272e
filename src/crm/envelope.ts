import { define } from '../shared/define.js';
import { fullSchemaApi } from '../shared/schema-api.js';
import { buildCrmAnyEnvelopeSchema } from './envelope-schemas.js';

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
export const crmAnyEnvelopeSchema = /* @__PURE__ */ define(() => buildCrmAnyEnvelopeSchema(fullSchemaApi));
