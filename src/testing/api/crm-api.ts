import type { CrmEmitter } from '../emitter/crm-emitter.js';
import type { CreateCrmWebhookInput, UpdateCrmWebhookInput } from '../emitter/crm-types.js';
import {
  errorResponse,
  fromError,
  json,
  matchRoute,
  type Route,
  readJson,
  segmentsUnder,
} from './responses.js';

/**
 * Options of {@link createCrmApi}.
 *
 * @example
 * ```ts
 * crmApiHandlers(crm, { tokens: { viewer: ['contacts:read'] } } satisfies CrmApiOptions);
 * ```
 */
export interface CrmApiOptions {
  /** Default `'https://api.svccrm.test'`. */
  baseUrl?: string;
  /**
   * Bearer tokens and the permissions they carry (crm-service §5 does not show the credential: we
   * use `Authorization: Bearer <token>`). Default `{ [CRM_TEST_TOKEN]: ['integrations:manage'] }`.
   */
  tokens?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The default token of the mocked CRM API, holding `integrations:manage`.
 *
 * @example
 * ```ts
 * import { CRM_TEST_TOKEN } from '@svc/webhooks/testing';
 *
 * await fetch('https://api.svccrm.test/v1/webhooks', { headers: { Authorization: `Bearer ${CRM_TEST_TOKEN}` } });
 * ```
 */
export const CRM_TEST_TOKEN = 'crm_test_token';

type Ctx = { emitter: CrmEmitter };

const routes: Route<Ctx>[] = [
  {
    path: 'webhooks',
    methods: {
      GET: ({ emitter }) => json(200, { data: emitter.listWebhooks() }),
      POST: async ({ emitter }, _p, request) =>
        json(201, emitter.createWebhook((await readJson(request)) as CreateCrmWebhookInput)),
    },
  },
  {
    path: 'webhooks/events',
    methods: { GET: ({ emitter }) => json(200, { data: emitter.listEventNames() }) },
  },
  {
    path: 'webhooks/:id',
    methods: {
      GET: ({ emitter }, { id }) => json(200, emitter.getWebhook(id!)),
      PATCH: async ({ emitter }, { id }, request) =>
        json(200, emitter.updateWebhook(id!, (await readJson(request)) as UpdateCrmWebhookInput)),
      DELETE: ({ emitter }, { id }) => json(200, emitter.deleteWebhook(id!)),
    },
  },
  {
    path: 'webhooks/:id/rotate-secret',
    methods: { POST: ({ emitter }, { id }) => json(200, emitter.rotateSecret(id!)) },
  },
  {
    path: 'webhooks/:id/deliveries',
    methods: { GET: ({ emitter }, { id }) => json(200, { data: emitter.listDeliveries(id!) }) },
  },
];

/**
 * The CRM service's webhook routes (`/v1/webhooks…`) as a web handler backed by an emitter. Every
 * route needs a Bearer token holding `integrations:manage` (`401 unauthorized`, `403
 * insufficient_permission`). `handle` resolves `undefined` for routes it does not serve.
 *
 * @example
 * ```ts
 * import { CRM_TEST_TOKEN, createCrmApi, createCrmEmitter } from '@svc/webhooks/testing';
 *
 * const api = createCrmApi(createCrmEmitter());
 * const response = await api.handle(
 *   new Request('https://api.svccrm.test/v1/webhooks/events', { headers: { Authorization: `Bearer ${CRM_TEST_TOKEN}` } }),
 * );
 * ```
 */
export function createCrmApi(emitter: CrmEmitter, options: CrmApiOptions = {}) {
  const { baseUrl = 'https://api.svccrm.test', tokens = { [CRM_TEST_TOKEN]: ['integrations:manage'] } } =
    options;

  async function handle(request: Request): Promise<Response | undefined> {
    const segments = segmentsUnder(request, baseUrl, '/v1');
    const match = segments ? matchRoute(routes, segments) : null;
    if (!match) return undefined;
    const token = /^Bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
    const permissions = token ? tokens[token] : undefined;
    if (!permissions)
      return errorResponse(401, 'unauthorized', 'Send a valid token as Authorization: Bearer <token>.');
    if (!permissions.includes('integrations:manage')) {
      return errorResponse(
        403,
        'insufficient_permission',
        'Managing webhooks needs the integrations:manage permission.',
      );
    }
    const handler = match.route.methods[request.method];
    if (!handler) return errorResponse(405, 'method_not_allowed', `${request.method} is not allowed here.`);
    try {
      return await handler({ emitter }, match.params, request);
    } catch (error) {
      return fromError(error);
    }
  }

  return { baseUrl, handle };
}

/**
 * The mocked CRM API's handler.
 *
 * @example
 * ```ts
 * const api: CrmApi = createCrmApi(crm);
 * const response = await api.handle(request);
 * ```
 */
export type CrmApi = ReturnType<typeof createCrmApi>;
