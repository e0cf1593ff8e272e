import type { MailEmitter } from '../emitter/mail-emitter.js';
import { createMailApiKeys } from './mail-api-keys.js';
import { MAIL_ROUTES } from './mail-api-routes.js';
import type { MailApiCredential, MailApiScope } from './mail-api-types.js';
import { docsResponse } from './mail-docs.js';
import { createRateLimiter, type RateHit } from './rate-limit.js';
import { errorResponse, fromError, json, matchRoute, segmentsUnder } from './responses.js';

export type { MailApiCredential, MailApiScope } from './mail-api-types.js';

/**
 * Options of {@link createMailApi}.
 *
 * @example
 * ```ts
 * mailApiHandlers(emitter, { baseUrl: 'https://mail.example.test' } satisfies MailApiOptions);
 * ```
 */
export interface MailApiOptions {
  /** Default `'https://api.svcmail.test'`. */
  baseUrl?: string;
  /** API keys (`X-API-Key`). Default: `{ [MAIL_TEST_API_KEY]: { scopes: ['admin'] } }`. */
  keys?: Readonly<Record<string, MailApiCredential>>;
  /** User session tokens, sent as `Authorization: Bearer <jwt>` (email-service §5.3). Default none. */
  sessions?: Readonly<Record<string, MailApiCredential>>;
  /** Calls per hour from one address (email-service §8: 500000), over it 429 `ip_rate_limit_exceeded`. */
  ipRateLimitPerHour?: number;
}

/**
 * The default admin key of the mocked email API.
 *
 * @example
 * ```ts
 * import { MAIL_TEST_API_KEY } from '@svc/webhooks/testing';
 *
 * await fetch('https://api.svcmail.test/api/v1/webhooks', { headers: { 'X-API-Key': MAIL_TEST_API_KEY } });
 * ```
 */
export const MAIL_TEST_API_KEY = 'zm_live_test_admin';

/** A 429 with the refused window's headers and `Retry-After` (email-service §7). */
const tooMany = (hit: RateHit, code: string, message: string) =>
  errorResponse(429, code, message, hit.headers);

const READ: readonly MailApiScope[] = ['read', 'admin'];
const ADMIN: readonly MailApiScope[] = ['admin'];

/**
 * The email service's webhook routes (`/api/v1/webhooks…`, `/api/v1/auth/me`, `/api/status`) and its
 * API-key routes (`POST`/`GET /api/v1/auth/api-keys`, `DELETE /api/v1/auth/api-keys/:id`, admin only) as a
 * web handler backed by an emitter: `X-API-Key` (or a session `Bearer` token), `401 unauthorized`,
 * `403 insufficient_scope` (writes need `admin`, reads `read` or `admin`), `429
 * api_rate_limit_exceeded` per key per minute with `X-RateLimit-*`. `handle` resolves `undefined` for
 * routes it does not serve. Use it with msw through {@link mailApiHandlers}, or mount it anywhere.
 *
 * @example
 * ```ts
 * import { createMailApi, createMailEmitter, MAIL_TEST_API_KEY } from '@svc/webhooks/testing';
 *
 * const api = createMailApi(createMailEmitter());
 * const response = await api.handle(
 *   new Request('https://api.svcmail.test/api/v1/webhooks', { headers: { 'X-API-Key': MAIL_TEST_API_KEY } }),
 * );
 * ```
 */
export function createMailApi(emitter: MailEmitter, options: MailApiOptions = {}) {
  const {
    baseUrl = 'https://api.svcmail.test',
    keys = { [MAIL_TEST_API_KEY]: { scopes: ['admin'] } },
    sessions = {},
    ipRateLimitPerHour = 500_000,
  } = options;
  const limiter = createRateLimiter(() => emitter.clock.now());
  const ipLimiter = createRateLimiter(() => emitter.clock.now(), 3_600_000);
  const apiKeys = createMailApiKeys(() => emitter.clock.now());

  /**
   * Answers `request` when it is one of the email service's routes, else resolves `undefined`.
   * `client.address` is the caller's IP (its hour window); `client.notFound` answers 404 `not_found`
   * for an unknown path under `/api` instead of `undefined` (a server that has no other routes there).
   */
  async function handle(
    request: Request,
    client: { address?: string; notFound?: boolean } = {},
  ): Promise<Response | undefined> {
    const docs = segmentsUnder(request, baseUrl, '/docs');
    const segments = docs ? null : segmentsUnder(request, baseUrl, '/api');
    const path = (docs ?? segments)?.join('/');
    const rest = segments?.[0] === 'v1' ? segments.slice(1) : null;
    const isMe = rest?.join('/') === 'auth/me';
    const match = rest && !isMe ? matchRoute(MAIL_ROUTES, rest) : null;
    const isDocs = docs !== null && (path === '' || path === 'json') && request.method === 'GET';
    const isStatus = segments !== null && path === 'status' && request.method === 'GET';
    const known = isDocs || isStatus || isMe || match !== null;
    if (!known && !(client.notFound && segments)) return undefined;

    // email-service §8: every call from an IP counts, and every answer carries the headers.
    const ip = ipLimiter.hit(`ip:${client.address ?? 'unknown'}`, ipRateLimitPerHour);
    if (ip.limited)
      return tooMany(
        ip,
        'ip_rate_limit_exceeded',
        `More than ${ipRateLimitPerHour} calls this hour from this address.`,
      );
    if (isDocs) return docsResponse(path === 'json', baseUrl, ip.headers);
    if (isStatus) return json(200, { status: 'ok' }, ip.headers);
    if (!known) {
      const where = new URL(request.url).pathname;
      return errorResponse(404, 'not_found', `No route ${request.method} ${where}.`, ip.headers);
    }

    const key = request.headers.get('x-api-key');
    const bearer = /^Bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
    // Keys made by POST /api/v1/auth/api-keys are found by their SHA-256 hash; revoked ones are not.
    const created = key && !Object.hasOwn(keys, key) ? await apiKeys.find(key) : undefined;
    const credential = key ? (created?.credential ?? keys[key]) : bearer ? sessions[bearer] : undefined;
    if (!credential)
      return errorResponse(401, 'unauthorized', 'Send a valid API key in the X-API-Key header.', ip.headers);
    const limit = credential.rateLimitPerMinute ?? 1000;
    const keyHit = limiter.hit(
      created ? `id:${created.id}` : `${key ? 'key' : 'session'}:${key ?? bearer}`,
      limit,
    );
    if (keyHit.limited)
      return tooMany(
        keyHit,
        'api_rate_limit_exceeded',
        `More than ${limit} calls this minute with this key.`,
      );
    // Two windows count this call: the headers show the one closer to refusing it.
    const rate = keyHit.remaining <= ip.remaining ? keyHit : ip;
    if (isMe) {
      return json(
        200,
        {
          authType: key ? 'api_key' : 'session',
          clientId: credential.clientId ?? 'client_test',
          agencyId: 'agency_test',
          role: key ? 'api_key' : 'user',
          scopes: credential.scopes,
        },
        rate.headers,
      );
    }
    const { route, params } = match!;
    const handler = route.methods[request.method];
    if (!handler)
      return errorResponse(405, 'method_not_allowed', `${request.method} is not allowed here.`, rate.headers);
    // email-service §4: creating keys "requires an admin key"; we ask admin for every key route.
    const needed = request.method === 'GET' && rest![0] !== 'auth' ? READ : ADMIN;
    if (!credential.scopes.some((scope) => needed.includes(scope))) {
      return errorResponse(
        403,
        'insufficient_scope',
        `This call needs the ${needed.join(' or ')} scope.`,
        rate.headers,
      );
    }
    try {
      const response = await handler({ emitter, apiKeys }, params, request);
      for (const [name, value] of Object.entries(rate.headers)) response.headers.set(name, value);
      return response;
    } catch (error) {
      return fromError(error, rate.headers);
    }
  }

  return { baseUrl, handle };
}

/**
 * The mocked email API's handler.
 *
 * @example
 * ```ts
 * const api: MailApi = createMailApi(emitter);
 * const response = await api.handle(request); // undefined: not one of its routes
 * ```
 */
export type MailApi = ReturnType<typeof createMailApi>;
