/**
 * The receive path, top to bottom: method and size → capture → verify → parse → handlers → dedup key
 * → process (claim → handlers → settle → outcome, process-delivery.ts). Service specifics (header
 * names, parser, dedup key) come in a {@link ServiceSpec}. The verifier and the store are chosen once
 * per receiver and answer an {@link Awaitable}: a delivery that never has to wait is answered without
 * a promise hop. The function never throws and never rejects: every path ends in an outcome.
 */

import { isWebhookError } from '../shared/errors.js';
import { toBytes } from '../verify/bytes.js';
import { getNodeCrypto } from '../verify/node-crypto.js';
import type { Secrets } from '../verify/secrets.js';
import type { HeaderValue } from '../verify/signature-header.js';
import { type VerifyResult, verifySignature, verifySignatureSync } from '../verify/verify-signature.js';
import type { Awaitable } from './awaitable.js';
import type { DispatchableEvent, HandlerRegistry } from './handler-registry.js';
import { enqueueDelivery } from './handoff/enqueue.js';
import { handleInvalid } from './invalid.js';
import { emit } from './logger.js';
import { acknowledged, failure, methodNotAllowed } from './outcomes.js';
import { createProcessDelivery, type Delivery } from './process-delivery.js';
import { bodyTooLarge, createRefusal } from './read-body.js';
import { readHeader, readHeaderString } from './read-header.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { BodyLimits, BodyReader, HeadersInput, ReceiveInput, ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';
import type { ServiceSpec } from './service-spec.js';
import { storeOpsFor } from './store-ops.js';

/** The receive function of a receiver: the outcome, or a promise of it when something had to wait. */
export type ReceiveNow = (input: ReceiveInput) => Awaitable<ReceiveOutcome>;

/** One request's bytes as they travel from the size check to the parser. */
interface Received {
  headers: HeadersInput;
  body: Uint8Array;
  signal: AbortSignal | undefined;
  /** Epoch ms on the receiver's clock; the handler deadline counts from it. */
  receivedAt: number;
}

type Verify = (body: Uint8Array, signature: HeaderValue, secrets: Secrets) => Awaitable<VerifyResult>;

/** Builds the receive function of a receiver. */
export function createReceivePath<E extends DispatchableEvent>(
  spec: ServiceSpec<E>,
  options: ResolvedOptions,
  registry: HandlerRegistry,
): ReceiveNow {
  const { secrets, maxBodyBytes, bodyTimeoutMs, logger, clock, capture } = options;
  const { service, headerNames } = spec;
  const hooks = registry.errorHooks;
  const tooLarge = bodyTooLarge(maxBodyBytes);
  const limits: BodyLimits = Object.freeze({ maxBodyBytes, bodyTimeoutMs });
  const refuse = createRefusal(service, logger);
  // Chosen once: node:crypto verifies synchronously; Web Crypto only answers with a promise.
  const verify: Verify = getNodeCrypto() !== null ? verifySignatureSync : verifySignature;
  const processDelivery = createProcessDelivery(options, hooks, storeOpsFor(options));

  function receive(input: ReceiveInput, bytes: Uint8Array): Awaitable<ReceiveOutcome> {
    const { headers } = input;
    const body = bytes instanceof Uint8Array ? bytes : toBytes(bytes);
    if (body.byteLength > maxBodyBytes)
      return failure(tooLarge, { deliveryId: readHeaderString(headers, headerNames.deliveryId) });
    const received: Received = { headers, body, signal: input.signal, receivedAt: clock.now() };
    // Opt-in capture of the bytes as received, before verification (docs/cli.md "Capture format").
    if (capture) captureSafely(received);
    // email-service §6 rule 1, crm-service §6 rule 2: the signature over the exact bytes, before parsing.
    const signature = readHeader(headers, headerNames.signature);
    const result = verify(body, signature, secrets);
    return result instanceof Promise
      ? result.then((late) => verified(received, late))
      : verified(received, result);
  }

  function verified(received: Received, result: VerifyResult): Awaitable<ReceiveOutcome> {
    const { headers, body } = received;
    if (!result.ok) {
      const deliveryId = readHeaderString(headers, headerNames.deliveryId);
      if (logger)
        emit(logger, 'warn', 'webhook signature rejected', { service, code: result.code, deliveryId });
      return failure(result, { deliveryId });
    }
    let event: E;
    try {
      event = spec.parse(body, headers, result.secretIndex);
    } catch (error) {
      return handleInvalid(spec, options, registry, {
        body,
        headers,
        error,
        secretIndex: result.secretIndex,
        startedAt: received.receivedAt,
      });
    }
    const { deliveryId, name } = event;
    const handlers = registry.handlersFor(event);
    // Hand-off mode enqueues even then: the workers' registrations decide (handoff/run-job.ts).
    if (handlers.length === 0 && !options.handoff) {
      // Nothing to run, so nothing to deduplicate: acknowledge so the sender stops retrying.
      if (logger) emit(logger, 'debug', 'webhook ignored: no handler', { service, deliveryId, event: name });
      return acknowledged('ignored', deliveryId, name);
    }
    let key: string;
    try {
      key = spec.dedupKey(event);
      if (typeof key !== 'string' || key.length === 0)
        throw new TypeError('dedup key must be a non-empty string');
    } catch (error) {
      report(hooks, logger, 'error', 'dedup key failed', { service, deliveryId, event: name }, error, {
        phase: 'dedup_key',
        event,
        deliveryId,
      });
      return failure('internal_error', { deliveryId, event: name });
    }
    // Hand-off mode (docs/handoff.md): a worker claims and runs it (handoff/run-job.ts); the engine's
    // uniqueness on `key` is the dedup check here.
    if (options.handoff) {
      return enqueueDelivery(spec, options, registry, options.handoff, {
        event,
        key,
        body,
        headers,
        secretIndex: result.secretIndex,
        startedAt: received.receivedAt,
      });
    }
    const delivery: Delivery = {
      service,
      event,
      handlers,
      key,
      startedAt: received.receivedAt,
      signal: received.signal,
    };
    // Direct mode: the delivery runs now, inside the request.
    return processDelivery(delivery);
  }

  function captureSafely({ headers, body, receivedAt }: Received): void {
    try {
      capture!({ service, receivedAt, headers, body });
    } catch {
      // A failing capture hook is logged and never changes the delivery's outcome.
      if (logger) emit(logger, 'warn', 'webhook capture hook failed', { service });
    }
  }

  function unexpected(error: unknown): ReceiveOutcome {
    if (isWebhookError(error) && error.status < 500) return failure(error);
    report(hooks, logger, 'error', 'receiver failed unexpectedly', { service }, error, { phase: 'internal' });
    return failure(isWebhookError(error) ? error : 'internal_error');
  }

  function guarded(input: ReceiveInput, bytes: Uint8Array): Awaitable<ReceiveOutcome> {
    let outcome: Awaitable<ReceiveOutcome>;
    try {
      outcome = receive(input, bytes);
    } catch (error) {
      return unexpected(error);
    }
    return outcome instanceof Promise ? outcome.then(undefined, unexpected) : outcome;
  }

  // The receiver reads a streamed body itself, within its own limits; a reader's refusal (too large,
  // too slow, unreadable, parsed by someone else) becomes the answer, logged once.
  function readThenReceive(input: ReceiveInput, reader: BodyReader): Promise<ReceiveOutcome> {
    let pending: Promise<Uint8Array>;
    try {
      pending = reader(limits);
    } catch (error) {
      return Promise.resolve(refuse(error));
    }
    // The receiver's own web reader (handle) answers its refusal as a value instead of rejecting.
    return Promise.resolve(pending).then(
      (bytes) =>
        bytes instanceof Uint8Array || !isWebhookError(bytes) ? guarded(input, bytes) : refuse(bytes),
      refuse,
    );
  }

  return function receiveNow(input) {
    let body: ReceiveInput['body'];
    try {
      const { method } = input;
      // Wrong method first, before the body is read: nothing else about the request matters.
      if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
        return methodNotAllowed();
      body = input.body;
    } catch (error) {
      return unexpected(error);
    }
    return typeof body === 'function' ? readThenReceive(input, body) : guarded(input, body);
  };
}
