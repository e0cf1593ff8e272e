/**
 * The receive path, top to bottom: method → the cap on deliveries in flight (shed.ts) → body → size
 * → capture → verify → parse → handlers → dedup key → run the delivery (claim → handlers → settle,
 * delivery/run.ts) or hand it off (the receiver's hand-off step, handoff/job/enqueue.ts, loaded only
 * by receivers with a `handoff` target). Service specifics (header names, parser, dedup key) come in
 * a {@link ServiceSpec}. Never rejects: every path ends in a {@link Verdict}.
 */

import { bodyTooLarge } from '../shared/body-errors.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import { toBytes } from '../verify/bytes.js';
import type { VerifyResult } from '../verify/verify-signature.js';
import { afterDelivery, type DeliverySettings, runDelivery } from './delivery/run.js';
import { logDrift } from './drift-log.js';
import type { DispatchableEvent, HandlerRegistry } from './handler-registry.js';
import { handleInvalid } from './invalid.js';
import { type DeliveryFacts, eventTimeOf } from './lag.js';
import { emit, errField } from './logger.js';
import type { PipelineOptions } from './pipeline-options.js';
import { quarantined } from './quarantine.js';
import { rawBodyReports } from './raw-body-unavailable.js';
import { readHeader, readHeaderString } from './read-header.js';
import type { BodyLimits, HeadersInput, ReceiveInput } from './receiver-types.js';
import { wasRepaired } from './repair.js';
import { report } from './report.js';
import { type SecretRequest, signatureCheck } from './route-secrets.js';
import { checkTenant } from './route-tenant.js';
import type { ServiceSpec } from './service-spec.js';
import { createShed } from './shed.js';
import { signatureRefusal } from './signature-refusal.js';
import { accepted, failed, refused, type Verdict, verdictOfError } from './verdict.js';

/**
 * The receive function of a receiver. `facts`, when given (by the outcome reporting of
 * receiver/observe.ts), gets what the verdict does not carry: the delivery's payload drift and the
 * times its lag is computed from (core/lag.ts).
 */
export type Receive = (input: ReceiveInput, facts?: DeliveryFacts) => Promise<Verdict>;

export type { DeliveryFacts } from './lag.js';

/** A verified, parsed delivery with its dedup key, as the pipeline hands it to a hand-off step. */
export interface VerifiedDelivery<E extends DispatchableEvent = DispatchableEvent> {
  /** The parsed event; for a quarantined delivery, only its id and name (from the headers). */
  readonly event: E;
  /**
   * The verified delivery failed the schema (`invalid_payload`): stored with the target's
   * `quarantine` instead of `enqueue` (docs/inbox-quarantine.md "Quarantine").
   */
  readonly quarantine?: WebhookError | undefined;
  readonly dedupKey: string;
  readonly body: Uint8Array;
  readonly headers: HeadersInput;
  readonly secretIndex: number;
  readonly receivedAt: number;
  /** The route it arrived on, as a `secret` function sees it; null when the adapter gave none. */
  readonly route: SecretRequest | null;
  /** The payload's drift (core/drift.ts), when it has any: the database inbox counts it. */
  readonly drift?: readonly string[] | undefined;
}

/**
 * Hand-off mode: writes a verified delivery to the queue engine (`queued`, `duplicate` or failed).
 * `quarantines`: the target also stores authentic deliveries that fail the schema (the database
 * inbox), so they are acknowledged instead of refused.
 */
export interface HandOff {
  (delivery: VerifiedDelivery): Promise<Verdict>;
  readonly quarantines?: boolean;
}

/** The route `input` came to, as a `secret` function sees it; null when the adapter gave none. */
function routeOf(input: ReceiveInput): SecretRequest | null {
  const { path, params } = input;
  return path === undefined && params === undefined ? null : { path: path ?? '/', params: params ?? {} };
}

/**
 * Builds the receive function of a receiver: deliveries run with `settings`, or go to `handOff` when
 * the receiver hands off.
 */
export function createReceivePath(
  spec: ServiceSpec,
  options: PipelineOptions,
  registry: HandlerRegistry,
  settings: DeliverySettings,
  handOff: HandOff | undefined,
): Receive {
  const { secrets, routeSecrets, maxBodyBytes, bodyTimeoutMs, logger, clock, capture, timeoutMs } = options;
  const { maxInFlight } = options;
  const { service, headerNames } = spec;
  const reporter = settings;
  const limits: BodyLimits = Object.freeze({ maxBodyBytes, bodyTimeoutMs });
  // Chosen once: node:crypto verifies without a promise (and without an await hop); Web Crypto
  // only with one (route-secrets.ts).
  const checkSignature = signatureCheck(secrets, routeSecrets);
  const firstRawBodyReport = rawBodyReports();
  // Requests between the method check and their verdict: the count `maxInFlight` caps (Infinity: none).
  let inFlight = 0;
  const release = () => {
    inFlight--;
  };
  const shed = createShed({ service, deliveryIdHeader: headerNames.deliveryId, maxInFlight, logger, clock });

  /** A reader's refusal (too large, too slow, unreadable, parsed by someone else), logged once. */
  function unreadable(error: unknown): Verdict {
    const reason = isWebhookError(error)
      ? error
      : new WebhookError('internal_error', 'The request failed.', { cause: error });
    const verdict = verdictOfError(service, reason);
    // A route missing its raw body fails every delivery the same way: its fix is logged once.
    const repeated = reason.code === 'raw_body_unavailable' && !firstRawBodyReport(reason);
    const level = repeated ? 'debug' : verdict.kind === 'failed' ? 'error' : 'warn';
    emit(logger, level, 'webhook request refused', {
      service,
      code: reason.code,
      ...(reason.cause === undefined ? {} : { err: errField(reason.cause) }),
    });
    return verdict;
  }

  function unexpected(error: unknown): Verdict {
    if (isWebhookError(error) && verdictOfError(service, error).kind === 'refused')
      return refused(service, error);
    report(reporter, {
      level: 'error',
      message: 'receiver failed unexpectedly',
      fields: { service },
      error,
      phase: 'internal',
    });
    return failed(service, isWebhookError(error) ? error.code : 'internal_error', error);
  }

  /**
   * With a target that quarantines (the database inbox), an authentic delivery the receiver cannot run
   * (core/quarantine.ts) is stored to re-drive after a fix and acknowledged, instead of refused.
   */
  function quarantine(
    error: unknown,
    body: Uint8Array,
    input: ReceiveInput,
    secretIndex: number,
    receivedAt: number,
  ): Promise<Verdict> | undefined {
    const { headers } = input;
    const kept = quarantined(spec, error, body, headers, secretIndex);
    if (!kept) return undefined;
    return handOff!({
      event: kept.event,
      dedupKey: kept.dedupKey,
      body,
      headers,
      secretIndex,
      receivedAt,
      quarantine: kept.error,
      route: routeOf(input),
    });
  }

  // One async function from the request to the verdict; whatever throws ends in `unexpected`.
  return async function receive(input: ReceiveInput, facts?: DeliveryFacts): Promise<Verdict> {
    let counted = false;
    try {
      const { method, headers } = input;
      // Wrong method first, before the body is read: nothing else about the request matters.
      if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
        return refused(
          service,
          new WebhookError('method_not_allowed', 'Webhook deliveries are POST requests.'),
        );
      // Past the cap, 503 at once: the body unread, so the deliveries in flight keep the event loop.
      // The slot is given back in `finally`, on every path to the verdict (docs/receivers-handlers.md "Shedding load").
      if (inFlight >= maxInFlight) return shed(headers);
      inFlight++;
      counted = true;
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
      let result: VerifyResult;
      try {
        result = checkSignature.sync
          ? checkSignature.sync(body, signature)
          : await checkSignature.async(body, signature, input);
      } catch (error) {
        // A `secret` function that threw or hung: secret_unavailable (503), its cause in the log.
        return unreadable(error);
      }
      if (!result.ok) {
        const deliveryId = readHeaderString(headers, headerNames.deliveryId);
        emit(logger, 'warn', 'webhook signature rejected', { service, code: result.code, deliveryId });
        const refusal = signatureRefusal(
          result,
          service,
          headerNames.signature,
          headers,
          spec.foreignSignatures,
        );
        return refused(service, refusal, { deliveryId });
      }
      let event: ReturnType<ServiceSpec['parse']>;
      try {
        event = spec.parse(body, headers, result.secretIndex);
      } catch (error) {
        const quarantined =
          handOff?.quarantines && quarantine(error, body, input, result.secretIndex, receivedAt);
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
      // The lag's times, only for a receiver that reports outcomes (numbers: no Date per delivery).
      if (facts) {
        facts.receivedAt = receivedAt;
        facts.eventAt = eventTimeOf(spec.timestamp?.(event));
      }
      // The app's repair made it valid: said without values, at info (one line per delivery).
      if (wasRepaired(event)) {
        emit(logger, 'info', 'webhook payload repaired by the app', { service, deliveryId, event: name });
        if (facts) facts.repaired = true;
      }
      // A route bound to a tenant takes no other tenant's body (CRM routeTenant), handlers or not.
      if (spec.tenants) {
        const wrong = checkTenant(spec, reporter, event, input);
        if (wrong) return verdictOfError(service, wrong, { deliveryId, event: name });
      }
      // Fields or an event this version does not know: logged once per process, counted per delivery.
      let drift = spec.drift?.(event);
      if (drift !== undefined && drift.length > 0) {
        logDrift(logger, service, name, drift);
        if (facts) facts.drift = drift;
      } else drift = undefined;
      const handlers = registry.handlersFor(event);
      // Hand-off mode enqueues even then: the workers' registrations decide (handoff/job/run-job.ts).
      if (handlers.length === 0 && !handOff) {
        // Nothing to run, so nothing to deduplicate: acknowledge so the sender stops retrying.
        emit(logger, 'debug', 'webhook ignored: no handler', { service, deliveryId, event: name });
        return accepted('ignored', service, deliveryId, name);
      }
      let dedupKey: string;
      try {
        dedupKey = spec.dedupKey(event);
        if (typeof dedupKey !== 'string' || dedupKey.length === 0)
          throw new TypeError('dedup key must be a non-empty string');
      } catch (error) {
        report(reporter, {
          level: 'error',
          message: 'dedup key failed',
          fields: { service, deliveryId, event: name },
          error,
          phase: 'dedup_key',
          event,
          deliveryId,
        });
        return failed(service, 'internal_error', error, { deliveryId, event: name });
      }
      if (handOff) {
        // Hand-off mode (docs/handoff.md): a worker claims and runs it (handoff/job/run-job.ts).
        return await handOff({
          event,
          dedupKey,
          body,
          headers,
          secretIndex: result.secretIndex,
          receivedAt,
          route: routeOf(input),
          drift,
        });
      }
      // Direct mode: the delivery runs now, inside the request (a verdict without a promise when
      // nothing was pending: returned as is, no await). Its slot is given back once it settled.
      const running = runDelivery(settings, {
        service,
        event,
        handlers,
        dedupKey,
        startedAt: receivedAt,
        timeoutMs,
        upstream: input,
        waitUntil: input.waitUntil,
        route: input,
        facts,
      });
      counted = false;
      return afterDelivery(running, release);
    } catch (error) {
      return unexpected(error);
    } finally {
      if (counted) release();
    }
  };
}
