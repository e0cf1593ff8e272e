/**
 * The AsyncAPI 3.0 document of `svc-webhooks schemas --format asyncapi`: both services' webhooks
 * around the JSON Schemas of ./json-schemas.ts.
 */
import { CRM_EVENT_DESCRIPTIONS, CRM_EVENT_NAMES } from '../crm/event-names.js';
import { CRM_HEADER_NAMES } from '../crm/header-names.js';
import { jsonSchemas } from '../json-schemas.js';
import { MAIL_EVENT_DESCRIPTIONS, MAIL_EVENT_NAMES } from '../mail/event-names.js';
import { MAIL_HEADER_NAMES } from '../mail/header-names.js';
import type { JsonSchema } from '../shared/json-schema.js';

/** One example delivery: its headers as sent and its JSON body. */
export interface AsyncApiExample {
  service: 'mail' | 'crm';
  /** The event name; an example of an event this version does not know is left out. */
  event: string;
  headers: Record<string, string>;
  payload: unknown;
}

/** An AsyncAPI 3.0 document: plain JSON. */
export type AsyncApiDocument = { asyncapi: '3.0.0'; [field: string]: unknown };

// What differs between the two services' channels; the rest of the document is built the same way.
const SERVICES = {
  mail: {
    title: 'Email service deliveries',
    section: 'email-service §6',
    names: MAIL_EVENT_NAMES,
    descriptions: MAIL_EVENT_DESCRIPTIONS as Readonly<Record<string, string>>,
    headers: MAIL_HEADER_NAMES,
    // email-service §6 rule 2: "deduplicate by X-SvcMAIL-Id".
    correlation: `$message.header#/${MAIL_HEADER_NAMES.deliveryId}`,
    retries:
      'Up to 3 attempts: at once, after about 1 minute and about 2 minutes; after 10 deliveries that failed all 3, the webhook is paused.',
  },
  crm: {
    title: 'CRM deliveries',
    section: 'crm-service §6',
    names: CRM_EVENT_NAMES,
    descriptions: CRM_EVENT_DESCRIPTIONS as Readonly<Record<string, string>>,
    headers: CRM_HEADER_NAMES,
    // crm-service §2: the body's `id`, equal to X-Svc-Delivery, the same across attempts.
    correlation: '$message.payload#/id',
    retries: 'At most 3 attempts in total, 1 s then 2 s apart; no retry after that.',
  },
} as const;

/** A JSON Schema as an AsyncAPI Schema Object: the same keywords, without `$schema`. */
const schemaObject = ({ $schema: _, ...schema }: JsonSchema): JsonSchema => schema;

/**
 * One AsyncAPI 3.0 document describing both services' webhooks from the receiving side: the
 * application is the `receiver` server; each service is a channel (the path of the webhook URL
 * registered with it, `/webhooks/mail` and `/webhooks/crm` by default of the examples) with one
 * message per event (its payload's JSON Schema from `jsonSchemas()`, the headers, the delivery id
 * as correlation id) and one `receive` operation over HTTP `POST`; the HMAC signature is each
 * service's security scheme (`httpApiKey` in its signature header, the computation described).
 * `examples` adds example deliveries to their messages (`svc-webhooks schemas --format asyncapi`
 * passes signed ones built from the fixtures, src/cli/schema-examples.ts).
 */
export function asyncApiDocument(
  options: {
    /** Example deliveries, each added to its event's message. Default: none. */
    examples?: readonly AsyncApiExample[];
  } = {},
): AsyncApiDocument {
  const { examples = [] } = options;
  const all = jsonSchemas();
  const payloads: Record<string, Readonly<Record<string, JsonSchema>>> = {
    mail: all.mail.payloads,
    crm: all.crm.envelopes,
  };
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const securitySchemes: Record<string, unknown> = {};
  const correlationIds: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const service of ['mail', 'crm'] as const) {
    const { title, section, names, descriptions, headers, correlation, retries } = SERVICES[service];
    schemas[`${service}Headers`] = schemaObject(all[service].headers);
    correlationIds[`${service}Delivery`] = {
      description:
        'The delivery id: the same across every attempt of one delivery, the key to deduplicate by.',
      location: correlation,
    };
    securitySchemes[`${service}Signature`] = {
      type: 'httpApiKey',
      in: 'header',
      name: headers.signature,
      description: `Not a key: \`sha256=\` and the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the webhook's secret (${section}). Verify it over the raw bytes, before parsing JSON, and compare in constant time.`,
    };
    const refs: Record<string, { $ref: string }> = {};
    for (const name of names) {
      const key = `${service}.${name}`;
      refs[name] = { $ref: `#/components/messages/${key}` };
      const own = examples.filter((e) => e.service === service && e.event === name);
      messages[key] = {
        name,
        title: name,
        summary: descriptions[name],
        contentType: 'application/json',
        headers: { $ref: `#/components/schemas/${service}Headers` },
        payload: schemaObject(payloads[service]![name]!),
        correlationId: { $ref: `#/components/correlationIds/${service}Delivery` },
        ...(own.length > 0 && {
          examples: own.map(({ headers: exampleHeaders, payload }) => ({
            name,
            headers: exampleHeaders,
            payload,
          })),
        }),
      };
    }
    channels[service] = {
      address: `/webhooks/${service}`,
      title,
      description: `The path of the webhook URL registered with the service (${section}); any path of yours works. Every event is one JSON POST.`,
      messages: refs,
    };
    operations[`receive${service === 'mail' ? 'Mail' : 'Crm'}Events`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${service}` },
      title: `Receive ${title.toLowerCase()}`,
      description: `Answer any 2xx within 10 seconds; redirects are not followed. ${retries} The same delivery can arrive more than once: deduplicate by its delivery id.`,
      security: [{ $ref: `#/components/securitySchemes/${service}Signature` }],
      bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } },
      messages: Object.keys(refs).map((name) => ({ $ref: `#/channels/${service}/messages/${name}` })),
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: "The email and CRM services' webhooks",
      version: '1.0.0',
      description:
        'Signed webhook deliveries of the email service (API v1) and the CRM service (webhooks 1.0), as an application receives them. Every object in a payload may carry fields not listed here: keep them.',
    },
    servers: {
      receiver: {
        host: '{host}',
        protocol: 'https',
        title: 'Your application',
        description: 'The application that receives the deliveries at the URLs it registered.',
        variables: {
          host: { default: 'localhost:3000', description: 'The host (and port) of your webhook URLs.' },
        },
      },
    },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: { schemas, messages, securitySchemes, correlationIds },
  };
}
