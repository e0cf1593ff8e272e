/**
 * The schemas of the email API's OpenAPI description: the shapes the mocked API sends and accepts.
 * email-service §2 and §4 show few fields ("not shown" for most): these are the emulated API's
 * decisions, the same ones `createMailApi` and the `./manage` client implement.
 */
import { MAIL_EVENT_NAMES } from '../../mail/event-names.js';

const SCOPES = ['send', 'read', 'domains', 'suppress', 'privacy', 'admin'];

const string = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullable = (schema: object) => ({ oneOf: [schema, { type: 'null' }] });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const events = { type: 'array', items: ref('MailEventName') } as const;

/** `{ type: 'object' }` with every property required except `optional`. */
function object(properties: Record<string, object>, optional: readonly string[] = [], description?: string) {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties,
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
  };
}

/** `components.schemas` of the email API's description. */
export const MAIL_SCHEMAS = {
  MailEventName: { type: 'string', enum: [...MAIL_EVENT_NAMES], description: 'email-service §6.' },
  Scope: { type: 'string', enum: SCOPES, description: 'email-service §5.' },
  Error: object(
    { error: object({ code: string, message: string }) },
    [],
    'Every error answer. Codes: unauthorized (401), insufficient_scope (403), api_rate_limit_exceeded and ip_rate_limit_exceeded (429), invalid_json and invalid_payload (400), not_found, webhook_not_found and delivery_not_found (404), method_not_allowed (405), webhook_paused (409), webhook_url_refused (422).',
  ),
  Status: object({ status: { type: 'string', enum: ['ok'] } }),
  Identity: object({
    authType: { type: 'string', description: '`api_key` with a key, `session` with a session token.' },
    clientId: string,
    agencyId: string,
    role: { type: 'string', description: '`api_key` with a key, `user` with a session token.' },
    scopes: { type: 'array', items: ref('Scope') },
  }),
  Webhook: object(
    {
      id: string,
      url: { type: 'string', format: 'uri' },
      events,
      description: string,
      secret: {
        type: 'string',
        description: 'In full only in the creation answer; masked on every later read.',
      },
      status: { type: 'string', enum: ['active', 'paused'] },
      consecutiveFailures: { type: 'integer', minimum: 0 },
      createdAt: time,
      updatedAt: time,
      pausedAt: nullable(time),
    },
    [],
  ),
  CreateWebhook: object(
    {
      url: {
        type: 'string',
        format: 'uri',
        description: 'Public addresses only on the service; the emulator accepts local ones.',
      },
      events: { ...events, minItems: 1 },
      description: string,
      secret: {
        type: 'string',
        minLength: 16,
        description:
          "The emulator's addition: use this secret instead of a generated one. The service always generates it.",
      },
    },
    ['description', 'secret'],
  ),
  UpdateWebhook: object(
    {
      url: { type: 'string', format: 'uri' },
      events: { ...events, minItems: 1 },
      description: string,
      status: {
        type: 'string',
        enum: ['active', 'paused'],
        description: '`active` reactivates a paused webhook.',
      },
    },
    ['url', 'events', 'description', 'status'],
  ),
  SecretRotation: object({ id: string, secret: string }),
  Deleted: object({ id: string, deleted: { type: 'boolean', enum: [true] } }),
  DeliveryAttempt: object({
    deliveryId: string,
    webhookId: string,
    event: string,
    attempt: {
      type: 'integer',
      minimum: 1,
      description: '1, 2, 3 on the schedule; manual retries continue the count.',
    },
    kind: { type: 'string', enum: ['scheduled', 'retry', 'test'] },
    attemptedAt: time,
    statusCode: { type: 'integer', description: 'The receiver’s status; 0 when no answer arrived.' },
    durationMs: { type: 'integer', minimum: 0, description: 'Real milliseconds.' },
    success: { type: 'boolean', description: 'A 2xx within 10 seconds.' },
    error: nullable(string),
    responseBody: nullable({ type: 'string', description: 'The first 1 KiB of the answer.' }),
  }),
  DeliveryPage: object({
    data: { type: 'array', items: ref('DeliveryAttempt'), description: 'Newest first.' },
    next_cursor: nullable({ type: 'string', description: 'Pass as `cursor` for the next page.' }),
  }),
  Delivery: object({
    id: string,
    webhookId: string,
    event: string,
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed', 'cancelled'] },
    createdAt: time,
    nextAttemptAt: nullable(time),
    test: { type: 'boolean' },
    attempts: { type: 'array', items: ref('DeliveryAttempt') },
    body: { type: 'string', description: 'The exact bytes sent, as text.' },
  }),
  ApiKey: object(
    {
      id: string,
      value: { type: 'string', description: '`zm_live_…`: only in the creation answer.' },
      name: string,
      prefix: { type: 'string', description: '`zm_live_` and the first 4 characters after it.' },
      scopes: { type: 'array', items: ref('Scope') },
      rateLimitPerMinute: { type: 'integer', minimum: 1 },
      createdAt: time,
      revokedAt: nullable(time),
    },
    ['value'],
  ),
  CreateApiKey: object(
    {
      name: { type: 'string', maxLength: 200 },
      scopes: { type: 'array', items: ref('Scope'), minItems: 1 },
      rateLimitPerMinute: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1000 },
    },
    ['name', 'rateLimitPerMinute'],
  ),
};
