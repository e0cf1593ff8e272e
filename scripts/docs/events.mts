// The event reference: one page per event of both services (26) and an index, generated from the
// sources the package itself uses: the event names and what each means (src/*/event-names.ts), the
// fields of its JSON Schema (converted from the zod schemas, src/cli/json-schemas.ts), the headers,
// a sample delivery (the signed examples of src/cli/schema-examples.ts, from the fixtures), the dedup
// keys and inbox ordering key the library's own functions compute for that sample, and a
// `svc-webhooks send` command. Nothing is read from the specs at build time.
import { CRM_EVENT_DESCRIPTIONS, CRM_EVENT_MEANINGS, CRM_EVENT_NAMES } from '../../src/crm/event-names.js';
import { crmDedupKeyOf } from '../../src/crm/dedup-key.js';
import { jsonSchemas } from '../../src/json-schemas.js';
import { EXAMPLE_SECRET, exampleDeliveries } from '../../src/cli/schema-examples.js';
import { defaultOrderingKey } from '../../src/inbox/ordering.js';
import { mailDedupKeyOf } from '../../src/mail/dedup-key.js';
import { MAIL_EVENT_DESCRIPTIONS, MAIL_EVENT_MEANINGS, MAIL_EVENT_NAMES } from '../../src/mail/event-names.js';
import type { JsonSchema } from '../../src/shared/json-schema.js';

type Service = 'mail' | 'crm';

export interface EventPage {
  source: string;
  page: string;
  markdown: string;
}

const SERVICE = {
  mail: { title: 'Email service', section: 'email-service §6', names: MAIL_EVENT_NAMES, meanings: MAIL_EVENT_MEANINGS as Record<string, string>, lines: MAIL_EVENT_DESCRIPTIONS as Record<string, string>, schema: 'mailPayloadSchemas', type: 'MailPayloadOf' },
  crm: { title: 'CRM', section: 'crm-service §6', names: CRM_EVENT_NAMES, meanings: CRM_EVENT_MEANINGS as Record<string, string>, lines: CRM_EVENT_DESCRIPTIONS as Record<string, string>, schema: 'crmEnvelopeSchemas', type: 'CrmEnvelopeOf' },
} as const;

/** The markdown source of an event's page, relative to the repository (virtual). */
export const eventSource = (service: Service, name: string) => `events/${service}/${name}.md`;

/** A JSON Schema's type in TypeScript-like words: `string`, `number | null`, `"bounced"`, `string[]`. */
function typeOf(schema: JsonSchema): string {
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).map(typeOf).join(' | ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : [];
  if (types.length === 0) return 'any';
  return types
    .map((type) => {
      if (type === 'array') return `${typeOf((schema.items ?? {}) as JsonSchema)}[]`;
      if (type === 'object') return schema.properties ? 'object' : 'object (any keys)';
      return type;
    })
    .join(' | ');
}

/** What a field's schema checks beyond its type. */
function checks(schema: JsonSchema): string {
  const notes: string[] = [];
  if (schema.format === 'date-time') notes.push('ISO 8601 date-time, UTC (`Z`)');
  else if (schema.format === 'uuid') notes.push('a UUID');
  else if (schema.pattern === '@') notes.push('contains `@`');
  else if (typeof schema.pattern === 'string') notes.push(`matches \`${schema.pattern}\``);
  if (schema.type === 'integer' && schema.minimum === 0) notes.push('≥ 0');
  if (typeof schema.description === 'string') notes.push(schema.description);
  return notes.join('; ');
}

/** One table row per field, nested objects (the CRM's `data`) as `data.field`. */
function fieldRows(schema: JsonSchema, prefix = ''): string[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const row = `| \`${path}\` | \`${typeOf(field).replace(/\|/g, '\\|')}\` | ${required.has(name) ? 'yes' : 'no'} | ${checks(field).replace(/\|/g, '\\|')} |`;
    return field.properties ? [row, ...fieldRows(field, `${path}.`)] : [row];
  });
}

function keyRows(service: Service, name: string, headers: Record<string, string>, payload: unknown): string[] {
  const deliveryId = service === 'mail' ? headers['X-SvcMAIL-Id']! : (payload as { id: string }).id;
  const event = { service, known: true, name, deliveryId, payload, data: (payload as { data?: unknown }).data } as never;
  const ordering = defaultOrderingKey({ service, event: name, payload });
  const rows =
    service === 'mail'
      ? [
          `| Dedup key, default \`dedupKey: 'delivery-id'\` | \`${mailDedupKeyOf('delivery-id')(event)}\` | the \`X-SvcMAIL-Id\` header: one per delivery, the same across its retries |`,
          `| Dedup key, \`dedupKey: 'message-event'\` | \`${mailDedupKeyOf('message-event')(event)}\` | ${(payload as { message_id?: string }).message_id ? 'the event and `message_id`: also one for the two `delivered` of a message' : 'no `message_id` in this event: the delivery id, as the default'} |`,
        ]
      : [`| Dedup key, default \`dedupKey: 'delivery-id'\` | \`${crmDedupKeyOf('delivery-id')(event)}\` | the envelope's \`id\` (equal to \`X-Svc-Delivery\`), the same across attempts |`];
  rows.push(
    ordering === null
      ? '| Ordering key ([inbox](../../docs/inbox-ordering.md)) | none | runs in no particular order with other events |'
      : `| Ordering key ([inbox](../../docs/inbox-ordering.md)) | \`${ordering}\` | the rows of one key run one at a time, oldest event first |`,
  );
  return rows;
}

function eventMarkdown(service: Service, name: string, example: { headers: Record<string, string>; payload: unknown }): string {
  const own = SERVICE[service];
  const schemas = jsonSchemas();
  const body = service === 'mail' ? schemas.mail.payloads[name as 'opened'] : schemas.crm.envelopes[name as 'deal.won'];
  const headerSchema = schemas[service].headers;
  const headerRows = Object.entries(headerSchema.properties as Record<string, JsonSchema>).map(
    ([header, schema]) =>
      `| \`${header}\` | ${String(schema.description).replace(/\|/g, '\\|')} | ${schema.pattern ? `\`${String(schema.pattern).replace(/\|/g, '\\|')}\`` : ''} |`,
  );
  const port = service === 'mail' ? 'mail' : 'crm';
  return [
    `# ${name}`,
    '',
    `${own.title} event (${own.section}; [all events](../index.md)). ${own.meanings[name]}`,
    '',
    `## ${service === 'mail' ? 'Payload' : 'Envelope and data'}`,
    '',
    service === 'crm'
      ? 'The body is the envelope of every CRM delivery around this event\'s `data`. Fields not listed here are kept, never refused: the services add fields.'
      : 'The body is the payload itself. Fields not listed here are kept, never refused: the services add fields.',
    '',
    '| Field | Type | Required | Checked |',
    '|---|---|---|---|',
    ...fieldRows(body),
    '',
    `The zod schema is \`${own.schema}['${name}']\` of \`@svc/webhooks/schemas\` (type \`${own.type}<'${name}'>\`); its JSON Schema, \`${body.title}\`, is \`${service}/${name}.json\` of [\`svc-webhooks schemas --out\`](../../docs/cli-schemas.md#schemas).`,
    '',
    '## Headers',
    '',
    '| Header | Value | Form |',
    '|---|---|---|',
    ...headerRows,
    '',
    '## Sample delivery',
    '',
    `Built from the fixtures and signed with the example secret \`${EXAMPLE_SECRET}\`:`,
    '',
    '```text',
    `POST /webhooks/${service}`,
    ...Object.entries(example.headers).map(([header, value]) => `${header}: ${value}`),
    '```',
    '',
    '```json',
    JSON.stringify(example.payload, null, 2),
    '```',
    '',
    '## Deduplication and ordering',
    '',
    'The keys the receivers compute for the sample above:',
    '',
    '| Key | For the sample | From |',
    '|---|---|---|',
    ...keyRows(service, name, example.headers, example.payload),
    '',
    `See [Exactly-once and stores](../../docs/dedup.md) and [the database inbox](../../docs/inbox-ordering.md#ordering-and-the-stale-guard).`,
    '',
    '## Send one to your app',
    '',
    `A valid signed \`${name}\` built from the fixtures ([\`svc-webhooks send\`](../../docs/cli.md#send); the secret from \`${service === 'mail' ? 'SVC_MAIL_WEBHOOK_SECRET' : 'SVC_CRM_WEBHOOK_SECRET'}\` or \`--secret\`):`,
    '',
    '```sh',
    `npx svc-webhooks send ${service} ${name} --url http://127.0.0.1:3000/webhooks/${port}`,
    '```',
    '',
  ].join('\n');
}

function indexMarkdown(): string {
  const table = (service: Service) => [
    '| Event | When |',
    '|---|---|',
    ...SERVICE[service].names.map((name) => `| [\`${name}\`](${service}/${name}.md) | ${SERVICE[service].lines[name]!.replace(/\|/g, '\\|')} |`),
  ];
  return [
    '# Event reference',
    '',
    'Every event of both services, one page each: what it means, its fields with their types and',
    'whether they are required, the headers, a signed sample delivery, the dedup and ordering keys it',
    'gets, and the command that sends one to your app. Generated from the schemas the receivers',
    'validate with; [Typed events](../docs/events.md) explains how a delivery becomes an event.',
    '',
    '## Email service',
    '',
    ...table('mail'),
    '',
    '## CRM',
    '',
    ...table('crm'),
    '',
  ].join('\n');
}

/** The index (`events/index.md`) and the 26 event pages. */
export async function eventPages(): Promise<EventPage[]> {
  const examples = await exampleDeliveries();
  const pages: EventPage[] = [{ source: 'events/index.md', page: 'events/index.html', markdown: indexMarkdown() }];
  for (const { service, event, headers, payload } of examples) {
    pages.push({
      source: eventSource(service, event),
      page: `events/${service}/${event}.html`,
      markdown: eventMarkdown(service, event, { headers, payload }),
    });
  }
  return pages;
}
