/**
 * @module
 * `@svc/webhooks/fastify`: a receiver as a Fastify 5 (and 4) plugin that hands the receiver the raw body.
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { BodyLimits, BodyReader } from '../core/receiver-types.js';
import { failed, type Verdict } from '../core/verdict.js';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { httpAnswer } from '../receiver/http-answer.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import { NodeInput } from './node/handle-request.js';
import { lingerThenClose } from './node/linger.js';
import { readNodeBody } from './node/read-body.js';

/**
 * Options of the route a {@link createFastifyPlugin} plugin serves: given when creating it, or when
 * registering it (those win).
 *
 * @example
 * ```ts
 * import type { FastifyRouteOptions } from '@svc/webhooks/fastify';
 *
 * const options: FastifyRouteOptions = { path: '/webhooks/mail', bodyLimit: 262_144 };
 * await app.register(createFastifyPlugin(mailReceiver, options));
 * ```
 */
export interface FastifyRouteOptions {
  /** Route path inside the plugin's prefix. Default `'/'`. */
  path?: string;
  /**
   * Largest body read, in bytes (413 past it). Default: the receiver's `maxBodyBytes`; a larger value
   * changes nothing (the receiver refuses past its own limit).
   */
  bodyLimit?: number;
  /**
   * Time allowed to receive the body, in ms (408 `body_timeout` past it, then the connection is
   * closed). Default: the receiver's `bodyTimeoutMs` (5 000). Fastify's own `requestTimeout` is off
   * by default: set it on the server too (docs/adapters-slow-clients.md).
   */
  bodyTimeoutMs?: number;
}

/** The route options with the receiver. */
interface ServeOptions extends FastifyRouteOptions {
  receiver: WebhookReceiverLike;
}

/**
 * A Fastify plugin serving `receiver` on `POST path`, registered like any plugin (route options may
 * also be given at registration, e.g. with a `prefix`). Inside its own encapsulated scope it swaps
 * every content-type parser for one that leaves the body unread, and the route hands the receiver a
 * reader of the raw stream: the signature is checked over the exact bytes while the rest of the app
 * keeps Fastify's JSON parser. The receiver reads within its own limits (or `bodyLimit` and
 * `bodyTimeoutMs`, when given) and answers every refusal: 413 `body_too_large`, 408 `body_timeout`,
 * with the receiver's error body. The handlers' `signal` aborts if the client disconnects before the
 * answer. Do not wrap it in `fastify-plugin` (that would leak the parser into your app).
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { createFastifyPlugin } from '@svc/webhooks/fastify';
 *
 * const app = Fastify();
 * await app.register(createFastifyPlugin(mailReceiver), { prefix: '/webhooks/mail' });
 * await app.register(createFastifyPlugin(crmReceiver, { path: '/webhooks/crm' }));
 * ```
 */
export function createFastifyPlugin(
  receiver: WebhookReceiverLike,
  options: FastifyRouteOptions = {},
): FastifyPluginCallback<FastifyRouteOptions> {
  return (scope, registered, done) => {
    serve(scope, { ...options, ...definedOf(registered), receiver });
    done();
  };
}

/** The route options Fastify passed at registration, without its own keys or unset values. */
function definedOf(registered: FastifyRouteOptions | undefined): FastifyRouteOptions {
  const out: FastifyRouteOptions = {};
  if (registered?.path !== undefined) out.path = registered.path;
  if (registered?.bodyLimit !== undefined) out.bodyLimit = registered.bodyLimit;
  if (registered?.bodyTimeoutMs !== undefined) out.bodyTimeoutMs = registered.bodyTimeoutMs;
  return out;
}

function serve(scope: FastifyInstance, options: ServeOptions): void {
  const { receiver, path = '/', bodyLimit, bodyTimeoutMs } = options;
  // Not wrapped in fastify-plugin on purpose: this parser stays inside this scope. It reads nothing:
  // Fastify's own reading has no deadline (slow-loris), and the receiver owns the body's limits.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request: FastifyRequest, _payload: unknown, parsed: ParserDone) =>
    parsed(null, undefined),
  );
  const reader =
    (raw: FastifyRequest['raw']): BodyReader =>
    (limits: BodyLimits) =>
      readNodeBody(
        raw,
        bodyLimit === undefined ? limits.maxBodyBytes : Math.min(bodyLimit, limits.maxBodyBytes),
        bodyTimeoutMs ?? limits.bodyTimeoutMs,
      );
  // What Fastify refuses itself (a malformed Content-Type) is answered by the receiver too, with its
  // error body, through a reader that refuses.
  scope.setErrorHandler((error, request, reply) =>
    answer(receiver, request, reply, () => Promise.reject(toWebhookError(error))),
  );
  scope.post(path, (request, reply) => answer(receiver, request, reply, reader(request.raw)));
}

type ParserDone = (error: Error | null, body?: unknown) => void;

/**
 * Runs the request through the receiver and sends its answer. Returns nothing, so Fastify waits for
 * `reply.send` rather than for a promise: an async handler's promise, resolved with the reply (a
 * thenable), cost Fastify a promise job and two callbacks per request (docs/benchmarks.md "Hono and
 * Fastify: where the adapters' instructions go").
 */
function answer(
  receiver: WebhookReceiverLike,
  request: FastifyRequest,
  reply: FastifyReply,
  body: BodyReader,
): void {
  let verdict: Promise<Verdict>;
  try {
    verdict = receiver.receive(new NodeInput(body, request.raw, reply.raw));
  } catch (error) {
    verdict = Promise.reject(error);
  }
  verdict.then(
    (settled) => send(request, reply, settled),
    // Our receivers never reject; one built elsewhere might (or throw), and must still get an answer.
    (error: unknown) =>
      send(request, reply, failed(receiver.service, 'internal_error', toWebhookError(error))),
  );
}

function send(request: FastifyRequest, reply: FastifyReply, verdict: Verdict): void {
  try {
    // An upload the receiver stopped reading: answer, then cut the connection once the answer had its
    // chance, instead of reading the rest.
    if (!request.raw.readableEnded) lingerThenClose(request.raw, reply.raw);
    const { status, headers, body: text } = httpAnswer(verdict);
    reply.code(status).headers(headers).send(text);
  } catch (error) {
    // What an async handler's rejection would get from Fastify: its error answer, never a hung request.
    reply.send(error instanceof Error ? error : new Error(String(error)));
  }
}

function toWebhookError(error: unknown): WebhookError {
  if (isWebhookError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) {
    return new WebhookError('body_unreadable', 'The request body could not be read.', { cause: error });
  }
  return new WebhookError('internal_error', 'The request failed.', { cause: error });
}
