/**
 * The receiver pipeline shared by both services: method and size -> verify -> parse -> validate ->
 * claim -> dispatch -> respond. Service specifics (header names, parser, dedup key) come in a
 * {@link ServiceSpec}. `receive` never rejects: every path ends in an outcome.
 */

import { toBytes } from '../verify/bytes.js';
import { getNodeCrypto } from '../verify/node-crypto.js';
import { verifySignature, verifySignatureSync } from '../verify/verify-signature.js';
import { dispatchClaimed } from './dispatch.js';
import { isWebhookError } from './errors.js';
import type { DispatchableEvent, HandlerRegistry } from './handler-registry.js';
import { handleInvalid } from './invalid.js';
import { emit } from './logger.js';
import { acknowledged, failed, failedWith, failure, methodNotAllowed } from './outcomes.js';
import { bodyTooLarge } from './read-body.js';
import { readHeader, readHeaderString } from './read-header.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { HeadersInput, ReceiveInput, ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';
import { claimWithin, StoreCallFailed } from './store-calls.js';

/** What differs between the services. Header names are lowercase. */
export interface ServiceSpec<E extends DispatchableEvent> {
  service: 'mail' | 'crm';
  headerNames: { readonly signature: string; readonly deliveryId: string; readonly event: string };
  /** Parses verified bytes; throws a `WebhookError` (400s) for anything that is not a valid event. */
  parse(body: Uint8Array, headers: HeadersInput, secretIndex: number): E;
  /** The namespaced dedup key (`mail:…`, `crm:…`); may throw (a user's key function). */
  dedupKey(event: E): string;
}

/** The receive function of a receiver. */
export function createPipeline<E extends DispatchableEvent>(
  spec: ServiceSpec<E>,
  options: ResolvedOptions,
  registry: HandlerRegistry,
): (input: ReceiveInput) => Promise<ReceiveOutcome> {
  const { secrets, maxBodyBytes, logger, clock, dedup, leaseMs, storeTimeoutMs } = options;
  const { service, headerNames } = spec;
  const syncVerify = getNodeCrypto() !== null;
  const tooLarge = bodyTooLarge(maxBodyBytes);
  const hooks = registry.errorHooks;

  async function run(input: ReceiveInput): Promise<ReceiveOutcome> {
    const { headers, method } = input;
    // Wrong method first: nothing else about the request matters.
    if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
      return methodNotAllowed();
    const body = input.body instanceof Uint8Array ? input.body : toBytes(input.body);
    if (body.byteLength > maxBodyBytes)
      return failed(tooLarge, readHeaderString(headers, headerNames.deliveryId));
    const startedAt = clock.now();

    // email-service §6 rule 1, crm-service §6 rule 2: the signature over the exact bytes, before parsing.
    const signature = readHeader(headers, headerNames.signature);
    const verified = syncVerify
      ? verifySignatureSync(body, signature, secrets)
      : await verifySignature(body, signature, secrets);
    if (!verified.ok) {
      const deliveryId = readHeaderString(headers, headerNames.deliveryId);
      if (logger)
        emit(logger, 'warn', 'webhook signature rejected', { service, code: verified.code, deliveryId });
      return failure(verified.code, verified.message, deliveryId);
    }

    let event: E;
    try {
      event = spec.parse(body, headers, verified.secretIndex);
    } catch (error) {
      return handleInvalid(spec, options, registry, {
        body,
        headers,
        error,
        secretIndex: verified.secretIndex,
      });
    }
    const { deliveryId, name } = event;

    const handlers = registry.handlersFor(event);
    if (handlers.length === 0) {
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
      return failedWith('internal_error', deliveryId, name);
    }

    const claim = await claimWithin(dedup, key, leaseMs, storeTimeoutMs);
    if (claim instanceof StoreCallFailed) {
      // Fail closed: no handler runs without a claim.
      report(
        hooks,
        logger,
        'error',
        'dedup store claim failed',
        { service, deliveryId, event: name, key },
        claim.cause,
        {
          phase: 'claim',
          event,
          deliveryId,
          key,
        },
      );
      return failedWith('store_unavailable', deliveryId, name);
    }
    if (claim.status === 'completed') {
      if (logger)
        emit(logger, 'debug', 'webhook duplicate: already completed', {
          service,
          deliveryId,
          event: name,
          key,
        });
      return acknowledged('duplicate', deliveryId, name);
    }
    if (claim.status === 'in_progress') {
      const seconds = Math.max(1, Math.ceil((claim.leaseEndsAt - clock.now()) / 1000));
      if (logger)
        emit(logger, 'info', 'webhook in progress elsewhere', { service, deliveryId, event: name, key });
      return failedWith('delivery_in_progress', deliveryId, name, seconds);
    }
    return dispatchClaimed(options, hooks, {
      service,
      event,
      handlers,
      key,
      token: claim.token,
      startedAt,
      signal: input.signal,
    });
  }

  return async function receive(input: ReceiveInput): Promise<ReceiveOutcome> {
    try {
      return await run(input);
    } catch (error) {
      if (isWebhookError(error) && error.status < 500) return failed(error);
      report(hooks, logger, 'error', 'receiver failed unexpectedly', { service }, error, {
        phase: 'internal',
      });
      return isWebhookError(error) ? failed(error) : failedWith('internal_error');
    }
  };
}
