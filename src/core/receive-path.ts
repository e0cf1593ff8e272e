/**
 * The receive path, top to bottom: method → body → size → capture → verify → parse → handlers → dedup
 * key → process (claim → handlers → settle, process-delivery.ts) or hand off (handoff/enqueue.ts).
 * Service specifics (header names, parser, dedup key) come in a {@link ServiceSpec}. Plain `async`
 * from the body to the verdict; never rejects: every path ends in a {@link Verdict}.
 */

import { enqueueDelivery } from '../handoff/job/enqueue.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import { toBytes } from '../verify/bytes.js';
import { getNodeCrypto } from '../verify/node-crypto.js';
import { verifySignature, verifySignatureSync } from '../verify/verify-signature.js';
import type { HandlerRegistry } from './handler-registry.js';
import { handleInvalid } from './invalid.js';
import { emit, errField } from './logger.js';
import { type ProcessSettings, processDelivery } from './process-delivery.js';
import { bodyTooLarge } from './read-body.js';
import { readHeader, readHeaderString } from './read-header.js';
import type { ResolvedOptions } from './receiver-options.js';
import type { BodyLimits, ReceiveInput } from './receiver-types.js';
import { report } from './report.js';
import { createScheduler } from './request-timers.js';
import type { ServiceSpec } from './service-spec.js';
import { accepted, failed, refused, type Verdict, verdictOfError } from './verdict.js';

/** The receive function of a receiver. */
export type Receive = (input: ReceiveInput) => Promise<Verdict>;

/** The processing settings of a receiver, built once. */
export function processSettings(options: ResolvedOptions, registry: HandlerRegistry): ProcessSettings {
  const { dedup, leaseMs, ttlMs, storeTimeoutMs, clock, logger } = options;
  return {
    store: dedup,
    leaseMs,
    ttlMs,
    storeTimeoutMs,
    clock,
    logger,
    hooks: registry.errorHooks,
    scheduler: createScheduler(clock),
  };
}

/** Builds the receive function of a receiver. */
export function createReceivePath(
  spec: ServiceSpec,
  options: ResolvedOptions,
  registry: HandlerRegistry,
): Receive {
  const { secrets, maxBodyBytes, bodyTimeoutMs, logger, clock, capture, timeoutMs } = options;
  const { service, headerNames } = spec;
  const hooks = registry.errorHooks;
  const limits: BodyLimits = Object.freeze({ maxBodyBytes, bodyTimeoutMs });
  const settings = processSettings(options, registry);
  // Chosen once: node:crypto verifies without a promise (and without an await hop); Web Crypto
  // only with one.
  const syncVerify = getNodeCrypto() !== null;

  /** A reader's refusal (too large, too slow, unreadable, parsed by someone else), logged once. */
  function unreadable(error: unknown): Verdict {
    const reason = isWebhookError(error)
      ? error
      : new WebhookError('internal_error', 'The request failed.', { cause: error });
    const verdict = verdictOfError(service, reason);
    emit(logger, verdict.kind === 'failed' ? 'error' : 'warn', 'webhook request refused', {
      service,
      code: reason.code,
      ...(reason.cause === undefined ? {} : { err: errField(reason.cause) }),
    });
    return verdict;
  }

  function unexpected(error: unknown): Verdict {
    if (isWebhookError(error) && verdictOfError(service, error).kind === 'refused')
      return refused(service, error);
    report(hooks, logger, 'error', 'receiver failed unexpectedly', { service }, error, { phase: 'internal' });
    return failed(service, isWebhookError(error) ? error.code : 'internal_error', error);
  }

  /**
   * With a target that quarantines (the database inbox), an authentic delivery that fails the schema
   * is stored to re-drive after a fix and acknowledged, instead of refused (docs/inbox.md).
   */
  function quarantine(
    error: unknown,
    body: Uint8Array,
    headers: ReceiveInput['headers'],
    secretIndex: number,
    receivedAt: number,
  ): Promise<Verdict> | undefined {
    const deliveryId = readHeaderString(headers, headerNames.deliveryId);
    const name = readHeaderString(headers, headerNames.event);
    if (!isWebhookError(error) || error.code !== 'invalid_payload' || !deliveryId || !name) return undefined;
    const key = `${service}:delivery:${deliveryId}`;
    return enqueueDelivery(spec, options, registry, options.handoff!, {
      event: { deliveryId, name },
      key,
      body,
      headers,
      secretIndex,
      receivedAt,
      quarantine: error,
    });
  }

  // One async function from the request to the verdict; whatever throws ends in `unexpected`.
  return async function receive(input: ReceiveInput): Promise<Verdict> {
    try {
      const { method, headers } = input;
      // Wrong method first, before the body is read: nothing else about the request matters.
      if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
        return refused(
          service,
          new WebhookError('method_not_allowed', 'Webhook deliveries are POST requests.'),
        );
      let body: Uint8Array;
      if (typeof input.body === 'function') {
        try {
          body = toBytes(await input.body(limits));
        } catch (error) {
          return unreadable(error);
        }
      } else body = toBytes(input.body);
      if (body.byteLength > maxBodyBytes)
        return refused(service, bodyTooLarge(maxBodyBytes), {
          deliveryId: readHeaderString(headers, headerNames.deliveryId),
        });
      const receivedAt = clock.now();
      // Opt-in capture of the bytes as received, before verification (docs/cli.md "Capture format").
      if (capture) {
        try {
          capture({ service, receivedAt, headers, body });
        } catch {
          // A failing capture hook is logged and never changes the verdict.
          emit(logger, 'warn', 'webhook capture hook failed', { service });
        }
      }
      // email-service §6 rule 1, crm-service §6 rule 2: the signature over the exact bytes, before parsing.
      const signature = readHeader(headers, headerNames.signature);
      const result = syncVerify
        ? verifySignatureSync(body, signature, secrets)
        : await verifySignature(body, signature, secrets);
      if (!result.ok) {
        const deliveryId = readHeaderString(headers, headerNames.deliveryId);
        emit(logger, 'warn', 'webhook signature rejected', { service, code: result.code, deliveryId });
        return refused(service, new WebhookError(result.code, result.message), { deliveryId });
      }
      let event: ReturnType<ServiceSpec['parse']>;
      try {
        event = spec.parse(body, headers, result.secretIndex);
      } catch (error) {
        const quarantined =
          options.handoff?.quarantine && quarantine(error, body, headers, result.secretIndex, receivedAt);
        if (quarantined) return await quarantined;
        return await handleInvalid(spec, options, registry, {
          body,
          headers,
          error,
          secretIndex: result.secretIndex,
          startedAt: receivedAt,
        });
      }
      const { deliveryId, name } = event;
      const handlers = registry.handlersFor(event);
      // Hand-off mode enqueues even then: the workers' registrations decide (handoff/run-job.ts).
      if (handlers.length === 0 && !options.handoff) {
        // Nothing to run, so nothing to deduplicate: acknowledge so the sender stops retrying.
        emit(logger, 'debug', 'webhook ignored: no handler', { service, deliveryId, event: name });
        return accepted('ignored', service, deliveryId, name);
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
        return failed(service, 'internal_error', error, { deliveryId, event: name });
      }
      if (options.handoff) {
        // Hand-off mode (docs/handoff.md): a worker claims and runs it (handoff/run-job.ts).
        return await enqueueDelivery(spec, options, registry, options.handoff, {
          event,
          key,
          body,
          headers,
          secretIndex: result.secretIndex,
          receivedAt,
        });
      }
      // Direct mode: the delivery runs now, inside the request.
      return await processDelivery(settings, {
        service,
        event,
        handlers,
        key,
        startedAt: receivedAt,
        timeoutMs,
        upstream: input,
        waitUntil: input.waitUntil,
      });
    } catch (error) {
      return unexpected(error);
    }
  };
}
