/**
 * Assembles a receiver from a service spec: the handler registry, the receive path, and the web-standard
 * `handle(Request)`. Both `createMailReceiver` and `createCrmReceiver` are thin wrappers of it.
 */
import type { DedupStore } from '../dedup/types.js';
import type { WebhookError } from '../shared/errors.js';
import { createHandlerRegistry, type DispatchableEvent } from './handler-registry.js';
import type { ErrorHook, InvalidHook, WebhookHandler } from './handler-types.js';
import { createJobRunner } from './handoff/run-job.js';
import type { HandoffRunner } from './handoff/types.js';
import { toResponse } from './outcomes.js';
import { createRefusal, readRequestBody } from './read-body.js';
import { createReceivePath } from './receive-path.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { BodyLimits, ReceiveInput, ReceiveOutcome, WebhookReceiverLike } from './receiver-types.js';
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
   * The `maxBodyBytes` option (largest body accepted, in bytes).
   *
   * @deprecated Adapters no longer need it: they pass a `BodyReader` as `ReceiveInput.body` and the
   * receiver applies its own limits. Keep the option's value in your own code if you need it.
   *
   * @example
   * ```ts
   * // Before: readRawBody(req, receiver.maxBodyBytes, fix). Now the receiver reads within its limits:
   * const outcome = await receiver.receive({
   *   body: ({ maxBodyBytes, bodyTimeoutMs }) => readNodeBody(req, maxBodyBytes, bodyTimeoutMs),
   *   headers: req.headers,
   *   method: req.method,
   * });
   * ```
   */
  readonly maxBodyBytes: number;
  /**
   * The `bodyTimeoutMs` option (time allowed to receive the body, in ms).
   *
   * @deprecated Adapters no longer need it: the receiver passes it to the `BodyReader` given as
   * `ReceiveInput.body`.
   *
   * @example
   * ```ts
   * const body: BodyReader = ({ maxBodyBytes, bodyTimeoutMs }) => readNodeBody(req, maxBodyBytes, bodyTimeoutMs);
   * ```
   */
  readonly bodyTimeoutMs: number;
  /**
   * The outcome for a request refused before the receiver saw its body, logged through the receiver's
   * logger with the error's `cause` in the log only.
   *
   * @deprecated Pass a `BodyReader` that rejects with the error as `ReceiveInput.body` instead: the
   * receiver answers and logs it the same way.
   *
   * @example
   * ```ts
   * const outcome = await receiver.receive({
   *   body: () => Promise.reject(new WebhookError('raw_body_unavailable', 'The body was parsed before the receiver.')),
   *   headers: req.headers,
   * });
   * ```
   */
  reject(error: WebhookError): ReceiveOutcome;
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

  const receiver: WebhookReceiver<Known, Unknown> = {
    service: spec.service,
    maxBodyBytes,
    bodyTimeoutMs,
    dedup: options.dedup,
    receive,
    reject: createRefusal(spec.service, logger),
    ...createJobRunner(spec, options, registry),
    handle(request: Request): Promise<Response> {
      // The receive path checks the method before it calls the reader, and owns every refusal.
      const outcome = receiveNow({
        // Resolves with the refusal rather than rejecting; the receive path answers it the same way.
        body: (limits: BodyLimits) =>
          readRequestBody(request, limits.maxBodyBytes, limits.bodyTimeoutMs) as Promise<Uint8Array>,
        headers: request.headers,
        method: request.method,
        signal: request.signal,
      });
      return outcome instanceof Promise ? outcome.then(toResponse) : Promise.resolve(toResponse(outcome));
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
