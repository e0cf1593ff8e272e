/**
 * @module
 * `@svc/webhooks/fastify`: a receiver as a Fastify 5 (and 4) plugin with its own raw-body parser.
 */
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import { isWebhookError, WebhookError } from '../core/errors.js';
import { receiveNowOf } from '../core/receive-now.js';
import type { ReceiveOutcome, WebhookReceiverLike } from '../core/receiver-types.js';

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
}

const EMPTY = new Uint8Array(0);

/**
 * A Fastify plugin serving one receiver on `POST path`. Inside its own encapsulated scope it swaps
 * every content-type parser for one raw `Buffer` parser, so the signature is checked over the exact
 * bytes while the rest of the app keeps Fastify's JSON parser. Bodies over `bodyLimit` get 413
 * `body_too_large` with the receiver's error body.
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
  // Not wrapped in fastify-plugin on purpose: these parsers stay inside this scope.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, next) =>
    next(null, body),
  );
  // Fastify refuses oversized or malformed bodies before the handler: answer with our error body.
  scope.setErrorHandler((error, _request, reply) => send(reply, receiver.reject(toWebhookError(error))));
  const receive = receiveNowOf(receiver);
  scope.post(path, (request, reply) => {
    const outcome = receive({
      body: (request.body as Buffer | undefined) ?? EMPTY,
      headers: request.headers,
    });
    // Finished synchronously (the usual case with the memory store): answer without a microtask.
    if (!(outcome instanceof Promise)) {
      send(reply, outcome);
      return;
    }
    return outcome.then((settled) => send(reply, settled));
  });
  done();
};

function send(reply: FastifyReply, outcome: ReceiveOutcome): FastifyReply {
  return reply
    .code(outcome.status)
    .headers(outcome.headers)
    .send(outcome.body ?? undefined);
}

function toWebhookError(error: unknown): WebhookError {
  if (isWebhookError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new WebhookError('body_too_large', 'The request body is larger than the limit.', { cause: error });
  }
  if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) {
    return new WebhookError('body_unreadable', 'The request body could not be read.', { cause: error });
  }
  return new WebhookError('internal_error', 'The request failed.', { cause: error });
}
