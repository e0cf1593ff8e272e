/**
 * The receiver pipeline shared by both services: method and size -> verify -> parse -> validate ->
 * claim -> dispatch -> respond. Service specifics (header names, parser, dedup key) come in a
 * {@link ServiceSpec}. `receive` never rejects: every path ends in an outcome.
 */

import { syncOpsOf } from '../dedup/sync-store.js';
import type { ClaimResult } from '../dedup/types.js';
import { enqueueDelivery } from '../handoff/enqueue.js';
import { toBytes } from '../verify/bytes.js';
import { getNodeCrypto } from '../verify/node-crypto.js';
import type { VerifyResult } from '../verify/verify-signature.js';
import { verifySignature, verifySignatureSync } from '../verify/verify-signature.js';
import { claimWithin } from './claim-within.js';
import { dispatchClaimed, type PendingDelivery } from './dispatch.js';
import { isWebhookError } from './errors.js';
import type { DispatchableEvent, HandlerRegistry } from './handler-registry.js';
import { handleInvalid } from './invalid.js';
import { emit } from './logger.js';
import { acknowledged, failed, failedWith, failure, methodNotAllowed } from './outcomes.js';
import { bodyTooLarge } from './read-body.js';
import { readHeader, readHeaderString } from './read-header.js';
import type { ReceiveNow } from './receive-now.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { HeadersInput, ReceiveInput, ReceiveOutcome } from './receiver-types.js';
import { report } from './report.js';
import { StoreCallFailed } from './store-calls.js';

/** What differs between the services. Header names are lowercase. */
export interface ServiceSpec<E extends DispatchableEvent> {
  service: 'mail' | 'crm';
  headerNames: { readonly signature: string; readonly deliveryId: string; readonly event: string };
  /**
   * Parses verified bytes; throws a `WebhookError` (400s) for anything that is not a valid event.
   * `receivedAt` (a hand-off worker's job) times the event-age check at receipt, not now.
   */
  parse(body: Uint8Array, headers: HeadersInput, secretIndex: number, receivedAt?: number): E;
  /** The namespaced dedup key (`mail:…`, `crm:…`); may throw (a user's key function). */
  dedupKey(event: E): string;
}

/** The receive function of a receiver: the outcome, or a promise of it when something had to wait. */
export function createPipeline<E extends DispatchableEvent>(
  spec: ServiceSpec<E>,
  options: ResolvedOptions,
  registry: HandlerRegistry,
): ReceiveNow {
  const { secrets, maxBodyBytes, logger, clock, dedup, leaseMs, storeTimeoutMs, capture } = options;
  const { service, headerNames } = spec;
  const syncVerify = getNodeCrypto() !== null;
  const tooLarge = bodyTooLarge(maxBodyBytes);
  const hooks = registry.errorHooks;

  // The memory store answers synchronously: with it, a delivery whose handlers are synchronous runs
  // from verified bytes to its outcome without a promise hop or a timer (src/dedup/sync-store.ts).
  const sync = syncOpsOf(dedup);

  /** Each step returns a value when it could finish synchronously, a promise when it had to wait. */
  function run(input: ReceiveInput): ReceiveOutcome | Promise<ReceiveOutcome> {
    const { headers, method } = input;
    // Wrong method first: nothing else about the request matters.
    if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
      return methodNotAllowed();
    const body = input.body instanceof Uint8Array ? input.body : toBytes(input.body);
    if (body.byteLength > maxBodyBytes)
      return failed(tooLarge, readHeaderString(headers, headerNames.deliveryId));
    const startedAt = clock.now();
    // Opt-in capture of the bytes as received, before verification (docs/cli.md "Capture format").
    if (capture) captureSafely(capture, service, startedAt, headers, body, logger);

    // email-service §6 rule 1, crm-service §6 rule 2: the signature over the exact bytes, before parsing.
    const signature = readHeader(headers, headerNames.signature);
    if (syncVerify) return verified(input, body, verifySignatureSync(body, signature, secrets), startedAt);
    return verifySignature(body, signature, secrets).then((result) =>
      verified(input, body, result, startedAt),
    );
  }

  function verified(
    input: ReceiveInput,
    body: Uint8Array,
    result: VerifyResult,
    startedAt: number,
  ): ReceiveOutcome | Promise<ReceiveOutcome> {
    const { headers } = input;
    if (!result.ok) {
      const deliveryId = readHeaderString(headers, headerNames.deliveryId);
      if (logger)
        emit(logger, 'warn', 'webhook signature rejected', { service, code: result.code, deliveryId });
      return failure(result.code, result.message, deliveryId);
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
        startedAt,
      });
    }
    const { deliveryId, name } = event;

    const handlers = registry.handlersFor(event);
    // Hand-off mode enqueues even then: the workers' registrations decide (src/handoff/run-job.ts).
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
      return failedWith('internal_error', deliveryId, name);
    }

    // Hand-off mode: a worker claims and runs it (src/handoff/run-job.ts); the engine's uniqueness on
    // `key` is the dedup check here.
    if (options.handoff) {
      const { secretIndex } = result;
      return enqueueDelivery(spec, options, registry, options.handoff, {
        event,
        key,
        body,
        headers,
        secretIndex,
        startedAt,
      });
    }
    const delivery: PendingDelivery<E> = { service, event, handlers, key, startedAt, signal: input.signal };
    if (sync) {
      let claim: ClaimResult | StoreCallFailed;
      try {
        claim = sync.claim(key, leaseMs);
      } catch (error) {
        claim = new StoreCallFailed('claim', error);
      }
      return claimed(delivery, claim);
    }
    return claimWithin(dedup, key, leaseMs, storeTimeoutMs).then((claim) => claimed(delivery, claim));
  }

  function claimed(
    delivery: PendingDelivery<E>,
    claim: ClaimResult | StoreCallFailed,
  ): ReceiveOutcome | Promise<ReceiveOutcome> {
    const { event, key } = delivery;
    const { deliveryId, name } = event;
    if (claim instanceof StoreCallFailed) {
      // Fail closed: no handler runs without a claim.
      const fields = { service, deliveryId, event: name, key };
      report(hooks, logger, 'error', 'dedup store claim failed', fields, claim.cause, {
        phase: 'claim',
        event,
        deliveryId,
        key,
      });
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
    return dispatchClaimed(options, hooks, sync, delivery, claim.token);
  }

  function unexpected(error: unknown): ReceiveOutcome {
    if (isWebhookError(error) && error.status < 500) return failed(error);
    report(hooks, logger, 'error', 'receiver failed unexpectedly', { service }, error, {
      phase: 'internal',
    });
    return isWebhookError(error) ? failed(error) : failedWith('internal_error');
  }

  return function receiveNow(input: ReceiveInput): ReceiveOutcome | Promise<ReceiveOutcome> {
    let outcome: ReceiveOutcome | Promise<ReceiveOutcome>;
    try {
      outcome = run(input);
    } catch (error) {
      return unexpected(error);
    }
    return outcome instanceof Promise ? outcome.then(undefined, unexpected) : outcome;
  };
}

/** Calls the capture hook; its failure is logged and never changes the delivery's outcome. */
function captureSafely(
  capture: NonNullable<ResolvedOptions['capture']>,
  service: 'mail' | 'crm',
  receivedAt: number,
  headers: HeadersInput,
  body: Uint8Array,
  logger: ResolvedOptions['logger'],
): void {
  try {
    capture({ service, receivedAt, headers, body });
  } catch {
    if (logger) emit(logger, 'warn', 'webhook capture hook failed', { service });
  }
}
