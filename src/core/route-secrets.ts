/**
 * A secret per tenant or per route: the `secret` option as a function of the request's path and
 * route parameters, resolved per request under a deadline, with a cache bounded in entries and time.
 * The function never sees the body: it is unverified, and the raw bytes are verified before anything
 * reads them (email-service §6 rule 1, crm-service §6 rule 2). The route is what the tenant
 * registered as its webhook URL, so a delivery verified there was signed with that tenant's secret.
 */
import type { Clock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { getNodeCrypto } from '../verify/node-crypto.js';
import { checkSecrets, type Secrets } from '../verify/secrets.js';
import { type HeaderValue, readSignatureHeader } from '../verify/signature-header.js';
import { type VerifyResult, verifyCheckedSync, verifySignature } from '../verify/verify-signature.js';
import { createDeadline, TIMED_OUT } from './deadline.js';
import type { ReceiveInput } from './receiver-types.js';

/**
 * What a `secret` function learns about a request: where it was sent, never its body or headers
 * (both are the sender's unverified choice).
 *
 * @example
 * ```ts
 * import type { SecretRequest } from '@svc/webhooks';
 *
 * const tenantOf = ({ params, path }: SecretRequest) => params.tenant ?? path.split('/').at(-1);
 * ```
 */
export interface SecretRequest {
  /** The URL's pathname as received (`/webhooks/crm/acme`), without the query. */
  readonly path: string;
  /** The framework's route parameters (Express `req.params`: `{ tenant: 'acme' }`); `{}` where there are none. */
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Where a delivery's route is read: a request's input (`ReceiveInput.path` and `.params`, read only
 * when something needs them, as adapters compute them on first read) or a hand-off job's `route`.
 */
export interface RouteSource {
  readonly path?: string | undefined;
  readonly params?: Readonly<Record<string, string>> | undefined;
}

/**
 * The route of `source`, frozen, as handlers (`context.route`), a `routeTenant` function and a
 * hand-off job get it: the pathname (default `/`) and a plain copy of the route parameters.
 */
export function routeOf(source: RouteSource): SecretRequest {
  const { path = '/', params } = source;
  return Object.freeze({ path, params: Object.freeze(params === undefined ? {} : { ...params }) });
}

/**
 * The `secret` option as a function: the secret (or the rotation list) of the route a request came
 * to, sync or async; `undefined` or `[]` for a route with none (an unknown tenant: 401, no handler
 * runs). A function that throws or outlasts `secretTimeoutMs` answers 503 `secret_unavailable`.
 *
 * @example
 * ```ts
 * import { createCrmReceiver, type SecretResolver } from '@svc/webhooks';
 *
 * const secret: SecretResolver = async ({ params }) => db.crmWebhookSecrets(params.tenant ?? '');
 * const crm = createCrmReceiver({ secret });
 * ```
 */
export type SecretResolver = (request: SecretRequest) => Secrets | undefined | Promise<Secrets | undefined>;

/** Limits of a {@link SecretResolver}'s use, from the receiver's options. */
export interface RouteSecretsOptions {
  clock: Clock;
  /** Bound on one call, in ms. */
  timeoutMs: number;
  /** How long an answer is reused, in ms; 0 asks every time. */
  cacheMs: number;
  /** Most routes remembered; the least recently used goes first. */
  cacheEntries: number;
}

/** The secrets of a route, and whether they came from the cache (then a mismatch may refresh them). */
export interface RouteSecretsFound {
  secrets: readonly string[];
  cachedAt: number | undefined;
}

/**
 * A cached answer is asked again on a mismatch (a rotation takes effect at once, crm-service §3), but
 * at most once per route per second: forged requests cannot turn into one resolver call each.
 */
const REFRESH_AFTER_MS = 1_000;

/** The lookup of a receiver with a `secret` function. */
export interface RouteSecrets {
  /** The route's secrets, cached or asked for; rejects with `secret_unavailable`. */
  find(request: SecretRequest): Promise<RouteSecretsFound>;
  /** Asks again after a mismatch with a cached answer old enough; undefined when it may not yet. */
  refresh(request: SecretRequest, found: RouteSecretsFound): Promise<RouteSecretsFound> | undefined;
}

function unavailable(message: string, cause?: unknown): WebhookError {
  return new WebhookError('secret_unavailable', message, cause === undefined ? {} : { cause });
}

/** The lookup of `resolver` within `options`' deadline and cache bounds. */
export function createRouteSecrets(resolver: SecretResolver, options: RouteSecretsOptions): RouteSecrets {
  const { clock, timeoutMs, cacheMs, cacheEntries } = options;
  // Map order is insertion order: re-inserting on use makes the first key the least recently used.
  const cache = new Map<string, { secrets: readonly string[]; at: number }>();
  // One call per route at a time: concurrent deliveries to a route share it.
  const pending = new Map<string, Promise<readonly string[]>>();

  async function call(request: SecretRequest): Promise<readonly string[]> {
    let answer: Secrets | undefined;
    try {
      answer = await resolver(routeOf(request));
    } catch (error) {
      throw unavailable('The webhook secret of this route could not be looked up.', error);
    }
    if (answer === undefined || (Array.isArray(answer) && answer.length === 0)) return [];
    const { list, problem } = checkSecrets(answer);
    if (problem) throw unavailable(`The secret function returned an unusable secret: ${problem.reason}.`);
    return list;
  }

  async function ask(request: SecretRequest): Promise<RouteSecretsFound> {
    const key = request.path;
    let shared = pending.get(key);
    if (!shared) {
      shared = call(request);
      pending.set(key, shared);
      const done = () => {
        if (pending.get(key) === shared) pending.delete(key);
      };
      shared.then(done, done);
    }
    const deadline = createDeadline(clock, clock.now() + timeoutMs);
    let secrets: readonly string[] | typeof TIMED_OUT;
    try {
      secrets = await deadline.race(shared);
    } finally {
      deadline.cancel();
    }
    if (secrets === TIMED_OUT) {
      // A hung call is dropped, so the next delivery asks again rather than wait on it.
      if (pending.get(key) === shared) pending.delete(key);
      throw unavailable(`The secret function did not answer within ${timeoutMs} ms.`);
    }
    if (cacheMs > 0) {
      cache.delete(key);
      cache.set(key, { secrets, at: clock.now() });
      if (cache.size > cacheEntries) cache.delete(cache.keys().next().value as string);
    }
    return { secrets, cachedAt: undefined };
  }

  return {
    find(request) {
      const hit = cache.get(request.path);
      if (hit && clock.now() - hit.at < cacheMs) {
        cache.delete(request.path);
        cache.set(request.path, hit);
        return Promise.resolve({ secrets: hit.secrets, cachedAt: hit.at });
      }
      return ask(request);
    },
    refresh(request, found) {
      if (found.cachedAt === undefined || clock.now() - found.cachedAt < REFRESH_AFTER_MS) return undefined;
      return ask(request);
    },
  };
}

const NO_SECRET: VerifyResult = {
  ok: false,
  code: 'signature_mismatch',
  message: 'The signature does not match the body for any configured secret.',
};

/**
 * Verifies `body` with the secrets of the route `input` came to. A request without a usable
 * signature header is refused before any lookup; a route without secrets (an unknown tenant) is a
 * mismatch, answered like a forged signature so the answer does not tell which tenants exist.
 */
export async function verifyForRoute(
  routeSecrets: RouteSecrets,
  body: Uint8Array,
  signature: HeaderValue,
  input: Pick<ReceiveInput, 'path' | 'params'>,
): Promise<VerifyResult> {
  const header = readSignatureHeader(signature);
  if (typeof header !== 'string') return { ok: false, ...header };
  const request: SecretRequest = routeOf(input);
  const check = ({ secrets }: RouteSecretsFound) =>
    secrets.length === 0 ? Promise.resolve(NO_SECRET) : verifySignature(body, signature, secrets);
  const found = await routeSecrets.find(request);
  const result = await check(found);
  if (result.ok || result.code !== 'signature_mismatch') return result;
  // A rotation since the answer was cached: the new secret verifies at once.
  const again = routeSecrets.refresh(request, found);
  return again ? check(await again) : result;
}

/** A receiver's check of a signature over exact bytes, made once by {@link signatureCheck}. */
export interface SignatureCheck {
  /** With fixed secrets on node:crypto: the check without a promise. Undefined otherwise. */
  readonly sync: ((body: Uint8Array, signature: HeaderValue) => VerifyResult) | undefined;
  /** The check with a promise: the route's secrets, or the fixed ones on Web Crypto (or node:crypto). */
  readonly async: (
    body: Uint8Array,
    signature: HeaderValue,
    route: Pick<ReceiveInput, 'path' | 'params'>,
  ) => Promise<VerifyResult>;
}

/**
 * How a receiver checks a signature, at receipt and again over an inbox row's stored bytes: with the
 * route's secrets when it has a `secret` function; otherwise with its fixed secrets (checked when it
 * was made), on node:crypto without a promise (`sync`, chosen once here), on Web Crypto with one.
 */
export function signatureCheck(
  secrets: readonly string[],
  routeSecrets: RouteSecrets | undefined,
): SignatureCheck {
  if (routeSecrets)
    return {
      sync: undefined,
      async: (body, signature, route) => verifyForRoute(routeSecrets, body, signature, route),
    };
  return {
    sync:
      getNodeCrypto() === null ? undefined : (body, signature) => verifyCheckedSync(body, signature, secrets),
    async: (body, signature) => verifySignature(body, signature, secrets),
  };
}
