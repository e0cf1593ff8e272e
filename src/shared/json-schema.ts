// A zod schema as JSON Schema, by zod's own conversion (`toJSONSchema`) with the options every
// published schema shares. Reached only from `svc-webhooks schemas` and `jsonSchemas()` of
// `@svc/webhooks/schemas` (src/json-schemas.ts): the receivers never convert anything.
import type * as z from 'zod';
import { looseObject, registry, string, toJSONSchema } from 'zod';

/**
 * A JSON Schema (draft 2020-12): plain JSON.
 *
 * @example
 * ```ts
 * import { jsonSchemas, type JsonSchema } from '@svc/webhooks/schemas';
 *
 * const bounced: JsonSchema = jsonSchemas().mail.payloads.bounced;
 * console.log(bounced.title); // MailBouncedPayload
 * ```
 */
export type JsonSchema = { [keyword: string]: unknown };

// The formats draft 2020-12 defines. zod names some checks as a `format` of its own (`includes` for
// the `@` of an email address): dropped, the check stays as its `pattern`, so validators that refuse
// unknown formats (Ajv's strict mode) take the document.
const FORMATS = new Set(
  'date-time date time duration email idn-email hostname idn-hostname ipv4 ipv6 uri uri-reference iri iri-reference uuid uri-template json-pointer relative-json-pointer regex'.split(
    ' ',
  ),
);

/**
 * `schema` as a draft 2020-12 JSON Schema with a `title` (the type name a code generator gives it)
 * and a `description`. The *input* side (`io: 'input'`): what a service sends, before zod parses it.
 * Loose objects keep `additionalProperties: {}`: a field the service adds later is valid, as it is
 * for the receivers. A zod type JSON cannot carry throws (none of ours is one).
 */
export function toJsonSchema(
  schema: z.ZodType,
  title: string,
  description: string,
  metadata?: z.core.$ZodRegistry<{ description: string }>,
): JsonSchema {
  const { $schema, ...rest } = toJSONSchema(schema, {
    target: 'draft-2020-12',
    ...(metadata && { metadata }),
    io: 'input',
    unrepresentable: 'throw',
    override: ({ jsonSchema }) => {
      if (typeof jsonSchema.format === 'string' && !FORMATS.has(jsonSchema.format)) delete jsonSchema.format;
    },
  });
  return { $schema, title, description, ...rest };
}

/** One request header of a service's deliveries: what it carries, and the form a receiver accepts. */
export interface HeaderDoc {
  description: string;
  pattern?: RegExp;
}

/**
 * The request headers of a service's deliveries as JSON Schema: an object of strings under the
 * spec's literal names, every one required (each delivery carries them), any other header allowed.
 * HTTP header names are case-insensitive; the names here are the specs' spelling. The descriptions
 * go through a registry of this call, not zod's global one, so an app's registry is left alone.
 */
export function headersJsonSchema(
  title: string,
  description: string,
  headers: Record<string, HeaderDoc>,
): JsonSchema {
  const docs = registry<{ description: string }>();
  const shape: Record<string, z.ZodString> = {};
  for (const [name, header] of Object.entries(headers)) {
    const schema = header.pattern ? string().regex(header.pattern) : string();
    docs.add(schema, { description: header.description });
    shape[name] = schema;
  }
  return toJsonSchema(looseObject(shape), title, description, docs);
}

/**
 * The signature header of both services (email-service §6, crm-service §6 rule 2): the form the
 * verifiers accept (src/verify/signature-header.ts), and `more` said after it.
 */
export const signatureHeader = (more = ''): HeaderDoc => ({
  description: `\`sha256=\` and the lowercase hex HMAC-SHA256 of the raw body, keyed with the webhook's secret${more}.`,
  pattern: /^sha256=[0-9a-f]{64}$/,
});

/** `deal.stage_changed` -> `DealStageChanged`: an event name as part of a type name. */
const typeName = (name: string) =>
  name.replace(/(?:^|[._])([a-z])/g, (_, letter: string) => letter.toUpperCase());

/**
 * The JSON Schema of each event of a service, by name, titled `${service}${Event}${kind}`
 * (`MailBouncedPayload`, `CrmDealWonEnvelope`) and described with its line from the spec.
 */
export function eventJsonSchemas<N extends string>(
  names: readonly N[],
  schemas: Readonly<Record<N, z.ZodType>>,
  descriptions: Readonly<Record<N, string>>,
  [service, kind]: [string, string],
): Record<N, JsonSchema> {
  const entries = names.map((name) => [
    name,
    toJsonSchema(schemas[name], `${service}${typeName(name)}${kind}`, descriptions[name]),
  ]);
  return Object.fromEntries(entries) as Record<N, JsonSchema>;
}
