/**
 * The JSON Schemas of `svc-webhooks schemas --format json-schema` and of the AsyncAPI document, and
 * `jsonSchemas()` of `@svc/webhooks/schemas` for a program that wants them without the command.
 */
import type { CrmEventName } from './crm/event-names.js';
import { crmJsonSchemas } from './crm/json-schemas.js';
import type { MailEventName } from './mail/event-names.js';
import { mailJsonSchemas } from './mail/json-schemas.js';
import type { JsonSchema } from './shared/json-schema.js';

/**
 * Both services' deliveries as JSON Schema (draft 2020-12): what {@link jsonSchemas} returns.
 *
 * @example
 * ```ts
 * import { jsonSchemas, type WebhookJsonSchemas } from '@svc/webhooks/schemas';
 *
 * const schemas: WebhookJsonSchemas = jsonSchemas();
 * console.log(Object.keys(schemas.mail.payloads)); // ['delivered', 'bounced', …]
 * ```
 */
export interface WebhookJsonSchemas {
  mail: {
    headers: JsonSchema;
    /** The body of each event, by name. */
    payloads: Record<MailEventName, JsonSchema>;
  };
  crm: {
    headers: JsonSchema;
    /** The envelope of any event, `data` unchecked. */
    envelope: JsonSchema;
    /** The whole body of each event, by name. */
    envelopes: Record<CrmEventName, JsonSchema>;
  };
}

/**
 * JSON Schema (draft 2020-12) of every event's body, the CRM envelope and both services' headers,
 * converted by zod's `toJSONSchema` from the zod schemas of `@svc/webhooks/schemas`: what a service
 * sends, as loose as the receivers (unknown properties allowed). Each has a `title`
 * (`MailBouncedPayload`, `CrmDealWonEnvelope`, `MailHeaders`) for code generators.
 *
 * @example
 * ```ts
 * import { writeFileSync } from 'node:fs';
 * import { jsonSchemas } from '@svc/webhooks/schemas';
 *
 * const { mail, crm } = jsonSchemas();
 * writeFileSync('bounced.schema.json', JSON.stringify(mail.payloads.bounced, null, 2));
 * console.log(Object.keys(crm.envelopes).length, 'CRM events');
 * ```
 */
export function jsonSchemas(): WebhookJsonSchemas {
  return { mail: mailJsonSchemas(), crm: crmJsonSchemas() };
}
