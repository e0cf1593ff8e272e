import * as z from 'zod';
import { define } from '../shared/define.js';
import { fullSchemaApi } from '../shared/schema-api.js';
import { buildCrmDataSchemas, buildCrmEnvelopeSchemas } from './envelope-schemas.js';

/**
 * The `data` schema of every known CRM event, by name, on full zod.
 *
 * @example
 * ```ts
 * import { crmDataSchemas } from '@svc/webhooks/schemas';
 *
 * const result = crmDataSchemas['deal.won'].safeParse(envelope.data);
 * ```
 */
export const crmDataSchemas = /* @__PURE__ */ define(() => buildCrmDataSchemas(fullSchemaApi));

/**
 * The whole envelope schema (crm-service §2) of every known CRM event, by name, on full zod. The
 * receivers parse with the same definitions built on `zod/mini` (same paths, codes and messages).
 *
 * @example
 * ```ts
 * import { crmEnvelopeSchemas } from '@svc/webhooks/schemas';
 *
 * const envelope = crmEnvelopeSchemas['contact.created'].parse(JSON.parse(text));
 * ```
 */
export const crmEnvelopeSchemas = /* @__PURE__ */ define(() =>
  buildCrmEnvelopeSchemas(fullSchemaApi, crmDataSchemas),
);

/**
 * A known CRM envelope, discriminated on `event`: for validating stored or queued envelopes (the
 * parser itself looks the schema up by name instead).
 *
 * @example
 * ```ts
 * import { crmEnvelopeSchema } from '@svc/webhooks/schemas';
 *
 * const envelope = crmEnvelopeSchema.parse(JSON.parse(text));
 * if (envelope.event === 'deal.won') envelope.data.value;
 * ```
 */
export const crmEnvelopeSchema = /* @__PURE__ */ define(() =>
  z.discriminatedUnion('event', [
    crmEnvelopeSchemas['contact.created'],
    crmEnvelopeSchemas['form.submitted'],
    crmEnvelopeSchemas['deal.stage_changed'],
    crmEnvelopeSchemas['deal.won'],
    crmEnvelopeSchemas['deal.lost'],
    crmEnvelopeSchemas['contact.updated'],
    crmEnvelopeSchemas['deal.created'],
    crmEnvelopeSchemas['survey.responded'],
    crmEnvelopeSchemas['campaign.completed'],
    crmEnvelopeSchemas['journey.enrolled'],
    crmEnvelopeSchemas['journey.completed'],
    crmEnvelopeSchemas['contact.unsubscribed'],
    crmEnvelopeSchemas['score.rule_fired'],
  ]),
);
