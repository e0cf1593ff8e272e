/**
 * @module
 * `@svc/webhooks/fastify`: a receiver as a Fastify 5 (and 4) plugin that hands the receiver the raw body.
 */
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { failure } from '../core/outcomes.js';
import type { BodyLimits, BodyReader, ReceiveOutcome, WebhookReceiverLike } from '../core/receiver-types.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import { disconnectSignal } from './node/disconnect-signal.js';
import { lingerThenClose } from './node/linger.js';
import { readNodeBody } from './node/read-body.js';

/**
 * Options of {@link webhookPlugin}.
 *
 * @example
 * ```ts
 * import type { WebhookPluginOptions } from '@svc/webhooks/fastify';
 *
 * const options: WebhookPluginOptions = { receiver: mailReceiver, path: '/webhooks/mail', bodyLimit: 262_144 };
 * ```
 */
export interface WebhookPluginOptions {
  receiver: WebhookReceiverLike;
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

/**
 * A Fastify plugin serving one receiver on `POST path`. Inside its own encapsulated scope it swaps
 * every content-type parser for one that leaves the body unread, and the route hands the receiver a
 * reader of the raw stream: the signature is checked over the exact bytes while the rest of the app
 * keeps Fastify's JSON parser. The receiver reads within its own limits (or the plugin's `bodyLimit`
 * and `bodyTimeoutMs`, when given) and answers every refusal: 413 `body_too_large`, 408
 * `body_timeout`, with the receiver's error body. The handlers' `signal` aborts if the client
 * disconnects before the answer.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { webhookPlugin } from '@svc/webhooks/fastify';
 *
 * const app = Fastify();
 * await app.register(webhookPlugin, { receiver: mailReceiver, path: '/webhooks/mail' });
 * await app.register(webhookPlugin, { receiver: crmReceiver, path: '/webhooks/crm' });
 * ```
 */
export const webhookPlugin: FastifyPluginCallback<WebhookPluginOptions> = (scope, options, done) => {
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
  done();
};

type ParserDone = (error: Error | null, body?: unknown) => void;

function answer(
  receiver: WebhookReceiverLike,
  request: FastifyRequest,
  reply: FastifyReply,
  body: BodyReader,
): Promise<unknown> {
  const send = (outcome: ReceiveOutcome) => {
    // An upload the receiver stopped reading: answer, then cut the connection once the answer had
    // its chance, instead of reading the rest.
    if (!request.raw.readableEnded) lingerThenClose(request.raw, reply.raw);
    return reply
      .code(outcome.status)
      .headers(outcome.headers)
      .send(outcome.body ?? undefined);
  };
  // Our receivers never reject; one built elsewhere might (or throw), and must still get an answer.
  const failed = (error: unknown) => send(failure(toWebhookError(error)));
  try {
    return receiver
      .receive({
        body,
        headers: request.headers,
        method: request.method,
        signal: disconnectSignal(reply.raw),
      })
      .then(send, failed);
  } catch (error) {
    return Promise.resolve(failed(error));
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
