/**
 * The receiver's runs of the database inbox's rows (docs/inbox.md). A row a worker claimed runs again
 * from what it stores: the service's own signature, stored as received, verified again over the
 * stored bytes with this receiver's secrets (the route's, for a `secret` function), the bytes parsed
 * once, the row's columns checked against that parse. A delivery of direct mode runs on the request's
 * own parse. Both run the handlers through `runDelivery` with the row as the claim.
 */

import { runBudget } from '../core/delivery/budget.js';
import type { DeliverySettings } from '../core/delivery/run.js';
import { runInWorker } from '../core/delivery/worker-run.js';
import type { DispatchableEvent, HandlerRegistry } from '../core/handler-registry.js';
import { type DeliveryFacts, eventTimeOf } from '../core/lag.js';
import { emit } from '../core/logger.js';
import type { PipelineOptions } from '../core/pipeline-options.js';
import { KEPT_AGAIN } from '../core/quarantine.js';
import { wasRepaired } from '../core/repair.js';
import { type SecretRequest, signatureCheck } from '../core/route-secrets.js';
import { checkTenant } from '../core/route-tenant.js';
import type { ServiceSpec } from '../core/service-spec.js';
import { telemetryEnabled, traced, validTraceparent } from '../core/telemetry.js';
import { accepted, failed, refused, type Verdict, verdictOfError } from '../core/verdict.js';
import type { AsyncHeld } from '../dedup/claims.js';
import type { RunJobOptions } from '../handoff/job/types.js';
import { isWebhookError, WebhookError } from '../shared/errors.js';
import type { VerifyResult } from '../verify/verify-signature.js';

/** A row of the inbox as its worker hands it to `receiver.runJob`: what it stores to run again. */
export interface StoredDelivery {
  /** Marks a stored row (a queue job is JSON and holds no bytes). */
  readonly stored: 'inbox';
  readonly service: string;
  readonly event: string;
  readonly deliveryId: string;
  readonly dedupKey: string;
  readonly receivedAt: number;
  /** The event, delivery-id and signature headers as received, by lowercase name. */
  readonly headers: Readonly<Record<string, string>>;
  /** The route it arrived on, as a `secret` function sees it; null when none was given. */
  readonly route: SecretRequest | null;
  readonly traceparent: string | null;
  readonly body: Uint8Array;
}

/** Whether `data` is a row of the inbox run with its row as the claim (never a queue engine's job). */
export function isStoredDelivery(data: unknown, options: RunJobOptions | undefined): data is StoredDelivery {
  return (
    typeof (options as Partial<RowRunOptions> | undefined)?.hold === 'function' &&
    typeof data === 'object' &&
    data !== null &&
    (data as StoredDelivery).stored === 'inbox' &&
    (data as StoredDelivery).body instanceof Uint8Array
  );
}

/**
 * A run whose claim is the inbox's row: `hold()` gives the row as a {@link AsyncHeld} (token: its
 * fence; complete: its move to `handled`, in the app's transaction `tx` when there is one), taken
 * when the handlers are about to run. Internal: the inbox's worker and direct mode pass it to
 * `runJob` beside its public options.
 */
export type RowRunOptions = RunJobOptions & {
  readonly hold: () => AsyncHeld;
  /** The app's transaction, shown to the handlers as `context.tx`. */
  readonly tx?: unknown;
  /**
   * A re-drive's check (inbox/redrive.ts): authenticate and parse the row (the app's repair
   * included), run no handler. `queued` when it would run; its failure's verdict otherwise.
   */
  readonly check?: true;
};

/** The two runs of a receiver over the inbox. */
export interface InboxRuns {
  /**
   * A row a worker claimed: authenticated and parsed again, then run (`job_invalid` if it is not
   * authentic; `invalid_payload` or `repair_failed` if it is, but still fails the schema and the
   * app's repair: the worker quarantines it again). `facts.repaired` is set when the repair made it valid.
   */
  stored(row: StoredDelivery, options: RowRunOptions, facts?: DeliveryFacts): Promise<Verdict>;
  /** Direct mode: the request's own parse, run in the request (`route`: `context.route`). */
  parsed(
    event: DispatchableEvent,
    dedupKey: string,
    options: RowRunOptions,
    route: SecretRequest | null,
  ): Promise<Verdict>;
}

function secretIndexOf(result: VerifyResult): number {
  if (!result.ok) throw rowInvalid(`has a signature that does not verify (${result.code})`);
  return result.secretIndex;
}

function rowInvalid(reason: string, cause?: unknown): WebhookError {
  return new WebhookError(
    'job_invalid',
    `The inbox row ${reason}: it was not written by a receiver holding this webhook's secret, or it was changed since, and it never runs.`,
    cause === undefined ? {} : { cause },
  );
}

/** The runs of a receiver with `spec`, `options`, `registry` and `settings`. */
export function createInboxRuns(
  spec: ServiceSpec,
  options: PipelineOptions,
  registry: HandlerRegistry,
  settings: DeliverySettings,
): InboxRuns {
  const { service, headerNames } = spec;
  const { leaseMs, logger, secrets, routeSecrets, telemetry } = options;
  // The receipt's own check (core/route-secrets.ts): on node:crypto without a promise.
  const checkSignature = signatureCheck(secrets, routeSecrets);

  /**
   * The index of the secret that verifies the row's stored signature, checked as the receipt checks
   * it. Throws `job_invalid`; a `secret` function's failure rejects (`secret_unavailable`).
   */
  function verified(row: StoredDelivery): number | Promise<number> {
    const signature = row.headers[headerNames.signature];
    if (signature === undefined) throw rowInvalid('holds no signature');
    if (routeSecrets && row.route === null)
      throw rowInvalid('holds no route, and the secrets of this receiver are per route');
    if (checkSignature.sync) return secretIndexOf(checkSignature.sync(row.body, signature));
    return checkSignature.async(row.body, signature, row.route ?? {}).then(secretIndexOf);
  }

  /** That the row's columns are those of `event` (its parse, or its read without the schema). */
  function matches(row: StoredDelivery, event: DispatchableEvent, secretIndex: number): void {
    if (event.deliveryId !== row.deliveryId || event.name !== row.event)
      throw rowInvalid('has a delivery id or event that differ from its body and headers');
    if (!keyed(row, event, secretIndex)) throw rowInvalid("has a dedup key that is not its event's");
  }

  /**
   * The row's event, parsed once from its authenticated bytes (the app's repair included) and checked
   * against its columns. An authentic row whose payload still fails the schema or the repair throws
   * that error (`invalid_payload`, `repair_failed`) once its columns match its read without the
   * schema: it is kept, not dead (docs/inbox.md "When the payload changes").
   */
  function parsedRow(row: StoredDelivery, secretIndex: number): DispatchableEvent {
    let event: DispatchableEvent;
    try {
      event = spec.parse(row.body, row.headers, secretIndex, row.receivedAt);
    } catch (error) {
      const read =
        isWebhookError(error) && KEPT_AGAIN.has(error.code)
          ? spec.unvalidated?.(row.body, row.headers, secretIndex)
          : undefined;
      if (read) {
        matches(row, read, secretIndex);
        throw error;
      }
      // The stored headers were changed (the parse refuses them), or the body cannot be read.
      throw rowInvalid(`no longer parses (${isWebhookError(error) ? error.code : 'parse error'})`, error);
    }
    matches(row, event, secretIndex);
    return event;
  }

  /** Whether the row's key is the one the receiver's strategy gives its event (or gave it quarantined). */
  function keyed(row: StoredDelivery, event: DispatchableEvent, secretIndex: number): boolean {
    try {
      if (spec.dedupKey(event) === row.dedupKey) return true;
      const read = spec.unvalidated?.(row.body, row.headers, secretIndex);
      return read !== undefined && spec.dedupKey(read) === row.dedupKey;
    } catch {
      return false;
    }
  }

  /** The handlers of `event` run with the row as the claim (the one place the row becomes a claim). */
  function run(
    event: DispatchableEvent,
    dedupKey: string,
    runOptions: RowRunOptions,
    route: SecretRequest | null,
    facts: DeliveryFacts | undefined,
  ): Promise<Verdict> {
    // With no handler here the row is `dead`, to re-drive after the deploy that registers one.
    const { timeoutMs = leaseMs - 1_000 } = runOptions;
    return runInWorker(settings, registry, {
      service,
      what: 'inbox row',
      event,
      dedupKey,
      timeoutMs,
      upstream: runOptions,
      attempt: runOptions.attempt,
      route: route ?? {},
      tx: runOptions.tx,
      hold: runOptions.hold,
      facts,
    });
  }

  function observed(
    event: DispatchableEvent,
    dedupKey: string,
    runOptions: RowRunOptions,
    traceparent: string | undefined,
    route: SecretRequest | null,
    facts?: DeliveryFacts,
  ): Promise<Verdict> {
    if (!telemetry || !telemetryEnabled(telemetry, logger, service))
      return run(event, dedupKey, runOptions, route, facts);
    const { deliveryId, name } = event;
    const start = {
      service,
      operation: 'process' as const,
      event: name,
      deliveryId,
      attempt: runOptions.attempt,
    };
    return traced(
      telemetry,
      { ...start, traceparent },
      () => run(event, dedupKey, runOptions, route, facts),
      logger,
    );
  }

  return {
    async stored(row, runOptions, facts) {
      // A budget the lease does not outlast: the worker's mistake, retried (runJob never rejects).
      const budget = runBudget(runOptions.timeoutMs, leaseMs);
      if (typeof budget !== 'number') return failed(service, budget.code, budget);
      let event: DispatchableEvent;
      try {
        if (row.service !== service) throw rowInvalid(`is of another service (${row.service})`);
        const secretIndex = verified(row);
        event = parsedRow(row, typeof secretIndex === 'number' ? secretIndex : await secretIndex);
      } catch (error) {
        const ids = { deliveryId: row.deliveryId, event: row.event };
        if (isWebhookError(error) && error.code === 'secret_unavailable')
          return failed(service, 'secret_unavailable', error, ids);
        if (isWebhookError(error) && KEPT_AGAIN.has(error.code)) return verdictOfError(service, error, ids);
        return refused(service, isWebhookError(error) ? error : rowInvalid('is unreadable', error));
      }
      if (wasRepaired(event)) {
        emit(logger, 'info', 'inbox row repaired by the app', {
          service,
          deliveryId: event.deliveryId,
          event: event.name,
        });
        if (facts) facts.repaired = true;
      }
      // A route bound to a tenant (CRM routeTenant): checked at receipt, and here again for a row that
      // was quarantined (stored before its tenant could be read) and re-driven.
      const wrong = spec.tenants && checkTenant(spec, settings, event, row.route ?? {});
      if (wrong) return verdictOfError(service, wrong, { deliveryId: event.deliveryId, event: event.name });
      if (runOptions.check) return accepted('queued', service, event.deliveryId, event.name);
      // The trace context is not signed: only a value of the W3C form is continued.
      const traceparent = validTraceparent(row.traceparent ?? undefined);
      if (facts) {
        // The row's receipt, written by the receiver that stored it (the app's own database).
        facts.receivedAt = row.receivedAt;
        facts.eventAt = eventTimeOf(spec.timestamp?.(event));
      }
      return observed(event, row.dedupKey, runOptions, traceparent, row.route, facts);
    },
    parsed: (event, dedupKey, runOptions, route) => observed(event, dedupKey, runOptions, undefined, route),
  };
}
