/**
 * @module
 * `@svc/webhooks/fastify`: a receiver as a Fastify 5 (and 4) plugin that hands the receiver the raw body.
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { bodyTimeout, bodyTooLarge } from '../core/read-body.js';
import type { BodyReader } from '../core/receiver-types.js';
import { failed, type Verdict } from '../core/verdict.js';
import { bodyLimitsOf } from '../receiver/body-limits.js';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { httpAnswer } from '../receiver/http-answer.js';
import { systemClock } from '../shared/clock.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import { Scheduler, TimeoutEntry } from '../shared/scheduler.js';
import { lingerThenClose } from './node/linger.js';
import { NodeInput } from './node/node-input.js';

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
   * by default: set it on the server too (docs/adapters.md).
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
 * every content-type parser for Fastify's own buffer parser bounded by the receiver's `maxBodyBytes`
 * (or `bodyLimit`, if lower), with the receiver's `bodyTimeoutMs` (or the plugin's) as a deadline:
 * the signature is checked over the exact bytes while the rest of the app keeps Fastify's JSON
 * parser. Every refusal is the receiver's, with its error body: 413 `body_too_large`, 408
 * `body_timeout`, 400 `body_unreadable`. A receiver not built by this library gets the default limits
 * (1 MiB, 5 s) unless `bodyLimit` and `bodyTimeoutMs` are given. The handlers' `signal` aborts if the client disconnects before the
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
  const limits = bodyLimitsOf(receiver);
  const maxBodyBytes = Math.min(bodyLimit ?? limits.maxBodyBytes, limits.maxBodyBytes);
  const timeoutMs = bodyTimeoutMs ?? limits.bodyTimeoutMs;
  // Not wrapped in fastify-plugin on purpose: this parser stays inside this scope. Fastify reads the
  // body itself within maxBodyBytes (a declared length past it refused unread, a stream cut at it)
  // and keeps a copy of the exact bytes; its reading has no deadline, so the route adds one.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: maxBodyBytes },
    (request: FastifyRequest, body: unknown, parsed: ParserDone) => {
      bodyRead(request);
      parsed(null, body);
    },
  );
  // The body deadline of each request, from the start of Fastify's reading (one shared timer).
  if (!scope.hasRequestDecorator(DEADLINE)) scope.decorateRequest(DEADLINE, null);
  const preParsing = (request: FastifyRequest, _reply: unknown, _payload: unknown, next: () => void) => {
    const deadline = new TimeoutEntry(() => stopReading(request.raw, bodyTimeout(timeoutMs)));
    (request as Deadlined)[DEADLINE] = deadline;
    deadlines.add(deadline, systemClock.now() + timeoutMs);
    next();
  };
  // What Fastify refuses itself (the body past its limit, a malformed Content-Type, a client gone
  // mid-body, the deadline) is answered by the receiver too, with its error body.
  scope.setErrorHandler((error, request, reply) => {
    bodyRead(request);
    return answer(receiver, request, reply, () => Promise.reject(toWebhookError(error, maxBodyBytes)));
  });
  scope.post(path, { preParsing }, (request, reply) =>
    answer(receiver, request, reply, (request.body as Uint8Array | undefined) ?? EMPTY),
  );
}

type ParserDone = (error: Error | null, body?: unknown) => void;

const EMPTY = new Uint8Array(0);
/** The request decoration holding its body deadline while Fastify reads. */
const DEADLINE = 'svcWebhooksBodyDeadline';
type Deadlined = FastifyRequest & { [DEADLINE]: TimeoutEntry | null };

/**
 * The body deadlines of every Fastify read in this process, on one unref'd timer: a runtime timer set
 * and cleared per request cost more than the rest of the read (docs/benchmarks.md).
 */
const deadlines = new Scheduler(systemClock);

function bodyRead(request: FastifyRequest): void {
  const deadline = (request as Deadlined)[DEADLINE];
  if (deadline === null) return;
  deadlines.remove(deadline);
  (request as Deadlined)[DEADLINE] = null;
}

/**
 * Ends Fastify's read of a body at its deadline: Fastify's reader listens for the request's `error`
 * and answers it through the error handler (408 here), with the rest of the upload left unread.
 * Only while that reader is still attached; once it is gone there is nothing to stop.
 */
function stopReading(raw: FastifyRequest['raw'], error: WebhookError): void {
  if (raw.readableEnded || raw.listenerCount('data') === 0 || raw.listenerCount('error') === 0) return;
  raw.emit('error', error);
}

async function answer(
  receiver: WebhookReceiverLike,
  request: FastifyRequest,
  reply: FastifyReply,
  body: Uint8Array | BodyReader,
): Promise<unknown> {
  let verdict: Verdict;
  try {
    verdict = await receiver.receive(new NodeInput(body, request.raw, reply.raw));
  } catch (error) {
    // Our receivers never reject; one built elsewhere might (or throw), and must still get an answer.
    verdict = failed(receiver.service, 'internal_error', toWebhookError(error, 0));
  }
  // An upload the receiver stopped reading: answer, then cut the connection once the answer had its
  // chance, instead of reading the rest.
  if (!request.raw.readableEnded) lingerThenClose(request.raw, reply.raw);
  const { status, headers, body: text } = httpAnswer(verdict);
  return reply.code(status).headers(headers).send(text);
}

function toWebhookError(error: unknown, maxBodyBytes: number): WebhookError {
  if (isWebhookError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return bodyTooLarge(maxBodyBytes, error);
  // Fastify's refusals of a body (FST_ERR_CTP_*) and a client that went away mid-body.
  if ((typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) || code === 'ECONNRESET') {
    return new WebhookError('body_unreadable', 'The request body could not be read.', { cause: error });
  }
  return new WebhookError('internal_error', 'The request failed.', { cause: error });
}
