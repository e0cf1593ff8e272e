/**
 * @module
 * `@svc/webhooks/fastify`: a receiver as a Fastify 5 (and 4) plugin with its own raw-body parser.
 */
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { bodyTooLarge } from '../core/read-body.js';
import type { ReceiveOutcome, WebhookReceiverLike } from '../core/receiver-types.js';
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
  /** Largest body read, in bytes (413 past it). Default: the receiver's `maxBodyBytes`. */
  bodyLimit?: number;
  /**
   * Time allowed to receive the body, in ms (408 `body_timeout` past it, then the connection is
   * closed). Default: the receiver's `bodyTimeoutMs` (5 000). Fastify's own `requestTimeout` is off
   * by default: set it on the server too (docs/adapters.md).
   */
  bodyTimeoutMs?: number;
}

const EMPTY = new Uint8Array(0);

/**
 * A Fastify plugin serving one receiver on `POST path`. Inside its own encapsulated scope it swaps
 * every content-type parser for one raw-bytes parser, so the signature is checked over the exact
 * bytes while the rest of the app keeps Fastify's JSON parser. Bodies over `bodyLimit` get 413
 * `body_too_large`, bodies slower than `bodyTimeoutMs` 408 `body_timeout`, with the receiver's error
 * body. The handlers' `signal` aborts if the client disconnects before the answer.
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
  const { receiver, path = '/', bodyLimit = receiver.maxBodyBytes } = options;
  const { bodyTimeoutMs = receiver.bodyTimeoutMs } = options;
  // Not wrapped in fastify-plugin on purpose: these parsers stay inside this scope. Our own reader
  // rather than `parseAs: 'buffer'`: Fastify has no deadline for reading a body (slow-loris).
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (request: FastifyRequest) =>
    readNodeBody(request.raw, bodyLimit, bodyTimeoutMs),
  );
  // A refused body (oversized, too slow, malformed) never reaches the handler: answer with our error
  // body, and cut a connection whose upload we stopped reading once the answer had its chance.
  scope.setErrorHandler((error, request, reply) => {
    if (!request.raw.readableEnded) lingerThenClose(request.raw, reply.raw);
    return send(reply, receiver.reject(toWebhookError(error, bodyLimit)));
  });
  scope.post(path, (request, reply) =>
    receiver
      .receive({
        body: (request.body as Uint8Array | undefined) ?? EMPTY,
        headers: request.headers,
        signal: disconnectSignal(reply.raw),
      })
      .then((outcome) => send(reply, outcome)),
  );
  done();
};

function send(reply: FastifyReply, outcome: ReceiveOutcome): FastifyReply {
  return reply
    .code(outcome.status)
    .headers(outcome.headers)
    .send(outcome.body ?? undefined);
}

function toWebhookError(error: unknown, bodyLimit: number): WebhookError {
  if (isWebhookError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return bodyTooLarge(bodyLimit, error);
  }
  if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) {
    return new WebhookError('body_unreadable', 'The request body could not be read.', { cause: error });
  }
  return new WebhookError('internal_error', 'The request failed.', { cause: error });
}
