/**
 * The email API's OpenAPI 3.1 description (email-service §1: "a machine-readable OpenAPI description
 * of every integration route", served at `{base_url}/docs/json`): the routes the mocked API serves,
 * with their auth header, scopes, rate-limit headers and error bodies as `createMailApi` decides them.
 */
import { MAIL_SCHEMAS } from './mail-openapi-schemas.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const content = (schema: object) => ({ 'application/json': { schema } });
const RATE_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};
const answer = (description: string, schema?: object) => ({
  description,
  headers: RATE_HEADERS,
  ...(schema ? { content: content(schema) } : {}),
});
const failure = (description: string) => answer(description, ref('Error'));

const ERRORS = {
  '401': failure('No valid `X-API-Key` (or session token): `unauthorized`.'),
  '403': failure('The credential lacks the scope: `insufficient_scope`.'),
  '429': {
    ...failure('Over the key’s per-minute or the address’s per-hour limit.'),
    headers: { ...RATE_HEADERS, 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds.' } },
  },
};

/** An operation needing one of `scopes` (OpenAPI 3.1: roles of a non-OAuth scheme). */
function operation(
  operationId: string,
  summary: string,
  scopes: readonly string[],
  responses: Record<string, object>,
  extra: Record<string, unknown> = {},
) {
  return {
    operationId,
    summary,
    description: `Needs the ${scopes.join(' or ')} scope.`,
    security: scopes.flatMap((scope) => [{ apiKey: [scope] }, { session: [scope] }]),
    ...extra,
    responses: { ...responses, ...ERRORS },
  };
}

const READ = ['read', 'admin'];
const ADMIN = ['admin'];
const idParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const body = (name: string) => ({ required: true, content: content(ref(name)) });
const query = (name: string, schema: object, description: string) => ({
  name,
  in: 'query',
  schema,
  description,
});

/** The document, its server being `baseUrl`. */
export function mailOpenApi(baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Email delivery service: integration API (emulated)',
      version: '1.0.0',
      description:
        'The routes `@svc/webhooks` emulates (svc-webhooks emulate, createMailApi): webhooks, their delivery attempts, API keys, the caller’s identity and status. Fields the service does not show are the emulator’s decisions. Every answer carries X-RateLimit-* headers: the address’s hour window (500000), or for a call with a credential the window closer to refusing it (the key’s minute window, 1000 by default).',
    },
    servers: [{ url: baseUrl }],
    security: [{ apiKey: [] }, { session: [] }],
    paths: {
      '/api/status': {
        get: {
          operationId: 'getStatus',
          summary: 'Whether the API is up',
          security: [],
          responses: { '200': answer('Up.', ref('Status')), '429': ERRORS['429'] },
        },
      },
      '/api/v1/auth/me': {
        get: {
          operationId: 'getIdentity',
          summary: 'The caller’s identity (tests a key)',
          responses: {
            '200': answer('The identity.', ref('Identity')),
            '401': ERRORS['401'],
            '429': ERRORS['429'],
          },
        },
      },
      '/api/v1/auth/api-keys': {
        get: operation('listApiKeys', 'List API keys (never their values)', ADMIN, {
          '200': answer('The keys.', {
            type: 'object',
            properties: { data: { type: 'array', items: ref('ApiKey') } },
            required: ['data'],
          }),
        }),
        post: operation(
          'createApiKey',
          'Create an API key',
          ADMIN,
          {
            '201': answer('The key, with its full value: the only time it is shown.', ref('ApiKey')),
            '400': failure('`invalid_json` or `invalid_payload`.'),
          },
          { requestBody: body('CreateApiKey') },
        ),
      },
      '/api/v1/auth/api-keys/{id}': {
        delete: operation(
          'revokeApiKey',
          'Revoke an API key',
          ADMIN,
          {
            '200': answer('The revoked key.', ref('ApiKey')),
            '404': failure('`not_found`.'),
          },
          { parameters: [idParam('id')] },
        ),
      },
      '/api/v1/webhooks': {
        get: operation('listWebhooks', 'List webhooks (secrets masked)', READ, {
          '200': answer('The webhooks.', {
            type: 'object',
            properties: { data: { type: 'array', items: ref('Webhook') } },
            required: ['data'],
          }),
        }),
        post: operation(
          'createWebhook',
          'Register a webhook',
          ADMIN,
          {
            '201': answer('The webhook, with its full secret: the only time it is shown.', ref('Webhook')),
            '400': failure('`invalid_json` or `invalid_payload`.'),
            '422': failure('An internal URL: `webhook_url_refused`.'),
          },
          { requestBody: body('CreateWebhook') },
        ),
      },
      '/api/v1/webhooks/{id}': {
        parameters: [idParam('id')],
        get: operation('getWebhook', 'One webhook (secret masked)', READ, {
          '200': answer('The webhook.', ref('Webhook')),
          '404': failure('`webhook_not_found`.'),
        }),
        patch: operation(
          'updateWebhook',
          'Change a webhook; `status: active` reactivates a paused one',
          ADMIN,
          {
            '200': answer('The webhook.', ref('Webhook')),
            '400': failure('`invalid_json` or `invalid_payload`.'),
            '404': failure('`webhook_not_found`.'),
            '422': failure('`webhook_url_refused`.'),
          },
          { requestBody: body('UpdateWebhook') },
        ),
        delete: operation('deleteWebhook', 'Remove a webhook', ADMIN, {
          '200': answer('Removed.', ref('Deleted')),
          '404': failure('`webhook_not_found`.'),
        }),
      },
      '/api/v1/webhooks/{id}/rotate-secret': {
        post: operation(
          'rotateSecret',
          'Generate a new secret',
          ADMIN,
          {
            '200': answer('The new secret, shown once.', ref('SecretRotation')),
            '404': failure('`webhook_not_found`.'),
          },
          { parameters: [idParam('id')] },
        ),
      },
      '/api/v1/webhooks/{id}/deliveries': {
        get: operation(
          'listDeliveries',
          'Delivery attempts, newest first (kept 90 days)',
          READ,
          {
            '200': answer('One page.', ref('DeliveryPage')),
            '400': failure('A bad query parameter: `invalid_payload`.'),
            '404': failure('`webhook_not_found`.'),
          },
          {
            parameters: [
              idParam('id'),
              query('since', { type: 'string', format: 'date-time' }, 'Attempts at or after this time.'),
              query(
                'success',
                { type: 'string', enum: ['true', 'false'] },
                'Only successful or failed attempts.',
              ),
              query(
                'limit',
                { type: 'integer', minimum: 1, maximum: 500 },
                'Page size; without it, every record.',
              ),
              query('cursor', { type: 'string' }, 'The previous page’s `next_cursor`.'),
            ],
          },
        ),
      },
      '/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry': {
        post: operation(
          'retryDelivery',
          'Resend one delivery now',
          ADMIN,
          {
            '200': answer('The new attempt.', ref('DeliveryAttempt')),
            '404': failure('`webhook_not_found` or `delivery_not_found`.'),
            '409': failure('The webhook is paused: `webhook_paused`.'),
          },
          { parameters: [idParam('id'), idParam('deliveryId')] },
        ),
      },
      '/api/v1/webhooks/{id}/test': {
        post: operation(
          'sendTest',
          'Send a synthetic `delivered` event signed with the webhook’s secret',
          ADMIN,
          {
            '200': answer('The test delivery and its attempt.', ref('Delivery')),
            '404': failure('`webhook_not_found`.'),
          },
          { parameters: [idParam('id')] },
        ),
      },
    },
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'zm_live_… (email-service §5).',
        },
        session: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A user session token.',
        },
      },
      headers: {
        'X-RateLimit-Limit': { schema: { type: 'integer' }, description: 'Calls allowed in the window.' },
        'X-RateLimit-Remaining': { schema: { type: 'integer' }, description: 'Calls left in the window.' },
        'X-RateLimit-Reset': {
          schema: { type: 'integer' },
          description: 'When the window ends, in epoch seconds.',
        },
      },
      schemas: MAIL_SCHEMAS,
    },
  };
}
