/**
 * Assembles a receiver from a service spec: the handler registry, the receive path, and the web-standard
 * `handle(Request)`. Both `createMailReceiver` and `createCrmReceiver` are thin wrappers of it.
 */
import type { DedupStore } from '../dedup/types.js';
import { WebhookError } from '../shared/errors.js';
import { createHandlerRegistry, type DispatchableEvent } from './handler-registry.js';
import type { ErrorHook, InvalidHook, WebhookHandler } from './handler-types.js';
import { createJobRunner } from './handoff/run-job.js';
import type { HandoffRunner } from './handoff/types.js';
import { describeError, emit } from './logger.js';
import { failure, methodNotAllowed, toResponse } from './outcomes.js';
import { readRequestBody } from './read-body.js';
import { createReceivePath } from './receive-path.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { ReceiveInput, WebhookReceiverLike } from './receiver-types.js';
import type { ServiceSpec } from './service-spec.js';

/**
 * A receiver of one service's webhooks: register handlers, then mount `handle` (web `Request`) or
 * give it to an adapter. Registration methods return the receiver, so calls chain.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! })
 *   .on('bounced', async (event) => suppress(event.payload.to))
 *   .on(['opened', 'clicked'], async (event) => track(event.name, event.payload.message_id));
 *
 * export const POST = (request: Request) => receiver.handle(request);
 * ```
 */
export interface WebhookReceiver<Known extends { name: string }, Unknown>
  extends WebhookReceiverLike,
    HandoffRunner {
  /** The dedup store in use (the per-receiver memory store unless one was given). */
  readonly dedup: DedupStore;
  /**
   * Runs `handler` for events named `name` (or any of `names`); the event type is narrowed to them.
   * Several handlers of one event run in registration order, then the `onAny` ones.
   */
  on<N extends Known['name']>(
    name: N | readonly N[],
    handler: WebhookHandler<Extract<Known, { name: N }>>,
  ): this;
  /** Runs `handler` for every known event (after its specific handlers). */
  onAny(handler: WebhookHandler<Known>): this;
  /** Runs `handler` for events this version of the library does not know (payload unvalidated). */
  onUnknown(handler: WebhookHandler<Unknown>): this;
  /** Receives handler exceptions, store failures and other errors (never sent to the sender). */
  onError(hook: ErrorHook<Known | Unknown>): this;
  /** Receives verified deliveries that fail to parse or validate, with their raw bytes. */
  onInvalid(hook: InvalidHook): this;
}

/** Builds a receiver; the service wrappers resolve options and the spec first. */
export function createReceiver<Known extends DispatchableEvent, Unknown extends DispatchableEvent>(
  spec: ServiceSpec<Known | Unknown>,
  options: ResolvedOptions,
  knownNames: readonly string[],
): WebhookReceiver<Known, Unknown> {
  const registry = createHandlerRegistry(knownNames);
  const receiveNow = createReceivePath(spec, options, registry);
  const receive = (input: ReceiveInput) => Promise.resolve(receiveNow(input));
  const { maxBodyBytes, bodyTimeoutMs, logger } = options;

  function reject(error: WebhookError): ReturnType<WebhookReceiverLike['reject']> {
    const outcome = failure(error);
    // The cause stays in the receiver's own log (a misconfigured route gets its fix there); the
    // sender only ever sees the short message.
    emit(logger, outcome.status >= 500 ? 'error' : 'warn', 'webhook request refused', {
      service: spec.service,
      code: outcome.code,
      status: outcome.status,
      ...(error.cause === undefined ? {} : { error: describeError(error.cause) }),
    });
    return outcome;
  }

  const receiver: WebhookReceiver<Known, Unknown> = {
    service: spec.service,
    maxBodyBytes,
    bodyTimeoutMs,
    dedup: options.dedup,
    receive,
    reject,
    ...createJobRunner(spec, options, registry),
    async handle(request: Request): Promise<Response> {
      if (request.method !== 'POST') return toResponse(methodNotAllowed());
      const body = await readRequestBody(request, maxBodyBytes, bodyTimeoutMs);
      if (body instanceof WebhookError) return toResponse(reject(body));
      return toResponse(await receiveNow({ body, headers: request.headers, signal: request.signal }));
    },
    on(name, handler) {
      registry.on(name, handler as WebhookHandler<never>);
      return receiver;
    },
    onAny(handler) {
      registry.onAny(handler as WebhookHandler<never>);
      return receiver;
    },
    onUnknown(handler) {
      registry.onUnknown(handler as WebhookHandler<never>);
      return receiver;
    },
    onError(hook) {
      registry.onError(hook as ErrorHook<never>);
      return receiver;
    },
    onInvalid(hook) {
      registry.onInvalid(hook);
      return receiver;
    },
  };
  return receiver;
}
