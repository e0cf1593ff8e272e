/**
 * The receiver's hand-off step to the database inbox (docs/inbox.md): after verify, parse and the
 * dedup key, the delivery itself is written as one row (the verified bytes, the headers that run it
 * again with the signature as received, the route, the receiver's parse for its ordering key and event
 * time) and acknowledged once the insert committed. No queue job, no job MAC, no base64: the inbox
 * is its own capability with its own shape ({@link DeliveryInbox}); `HandoffJob` is for queue engines.
 */

import { boundAt, pendingWithinBound } from '../core/bounded-write.js';
import type { DispatchableEvent, HandlerRegistry } from '../core/handler-registry.js';
import { emit, errField } from '../core/logger.js';
import type { PipelineOptions } from '../core/pipeline-options.js';
import { readHeaderString } from '../core/read-header.js';
import type { HandOff, VerifiedDelivery } from '../core/receive-path.js';
import { report } from '../core/report.js';
import type { SecretRequest } from '../core/route-secrets.js';
import type { ServiceSpec } from '../core/service-spec.js';
import { jobTraceparent } from '../core/telemetry.js';
import { accepted, failed, type Verdict } from '../core/verdict.js';
import type { EnqueueResult, HandoffRunner } from '../handoff/job/types.js';
import type { WebhookError } from '../shared/errors.js';
import type { InboxRuns, RowRunOptions } from './inbox-runs.js';

/** One verified delivery as the receiver hands it to the inbox: the row to write. */
export interface InboxReceipt {
  readonly service: string;
  /** The receiver's parse; for a quarantined delivery, its read without the schema. */
  readonly event: DispatchableEvent;
  readonly dedupKey: string;
  readonly receivedAt: number;
  readonly body: Uint8Array;
  /** The event, delivery-id and signature headers as received, by lowercase name. */
  readonly headers: Record<string, string>;
  readonly route: SecretRequest | null;
  readonly traceparent: string | null;
  /** Set for an authentic delivery whose payload failed the schema: stored `quarantined`. */
  readonly quarantine: WebhookError | undefined;
}

/** What a direct inbox runs a delivery in the request with: the receiver's run of its own parse. */
export interface InboxRequestRunner extends Pick<HandoffRunner, 'service' | 'leaseMs' | 'reportJobError'> {
  run(options: RowRunOptions): Promise<Verdict>;
}

/** The database inbox as a receiver writes to it (an `Inbox`, or a direct inbox: src/inbox/). */
export interface DeliveryInbox {
  /** Inserts the row unless its dedup key has one: a value when the write finished at once (SQLite). */
  storeDelivery(receipt: InboxReceipt): EnqueueResult | Promise<EnqueueResult>;
  /**
   * Adds a verified delivery's payload drift (core/drift.ts: paths, `""` for an unknown event) to the
   * inbox's counts (inbox/drift.ts); called only for a delivery that has drift.
   */
  countDrift?(service: string, event: string, paths: readonly string[], timeoutMs: number): Promise<void>;
  /** Direct mode: writes the row and runs it in the request; the verdict is the answer. */
  runInRequest?(receipt: InboxReceipt, runner: InboxRequestRunner): Promise<Verdict>;
  readonly enqueueTimeoutMs?: number;
}

/** `target` when it is the database inbox (it stores deliveries, not jobs); undefined otherwise. */
export function deliveryInboxOf(target: object | undefined): DeliveryInbox | undefined {
  return typeof (target as Partial<DeliveryInbox> | undefined)?.storeDelivery === 'function'
    ? (target as DeliveryInbox)
    : undefined;
}

/** The hand-off step of a receiver whose `handoff` is the database inbox. */
export function createInboxHandOff(
  spec: ServiceSpec,
  options: PipelineOptions,
  registry: HandlerRegistry,
  inbox: DeliveryInbox,
  runs: () => InboxRuns,
  reportJobError: HandoffRunner['reportJobError'],
): HandOff {
  const { service, headerNames } = spec;
  const { logger, telemetry, clock, leaseMs } = options;
  const names = [headerNames.event, headerNames.deliveryId, headerNames.signature];
  const timeoutMs = inbox.enqueueTimeoutMs ?? options.storeTimeoutMs;

  /**
   * The delivery's drift added to the inbox's counts (inbox/drift.ts), within what is left of the
   * hand-off's bound (the statement's own timeout: no second timer). A failure is logged and changes
   * no answer: the row is what the acknowledgement promises. Called only for a delivery with drift:
   * the others take no await (no microtask turn) for it.
   */
  async function countDrift(delivery: VerifiedDelivery, fields: Record<string, string>): Promise<void> {
    const { drift, event, receivedAt } = delivery;
    if (drift === undefined || inbox.countDrift === undefined) return;
    try {
      const leftMs = Math.min(receivedAt, clock.now()) + timeoutMs - clock.now();
      if (leftMs <= 0) throw new Error(`no time left of the ${timeoutMs} ms bound from the receipt`);
      await inbox.countDrift(service, event.name, drift, leftMs);
    } catch (error) {
      emit(logger, 'warn', 'inbox drift counts not written', { ...fields, err: errField(error) });
    }
  }

  /** A write that failed or ran past its bound: reported, and 503 for the sender to retry. */
  function unavailable(error: unknown, delivery: VerifiedDelivery, fields: Record<string, string>): Verdict {
    const { event, dedupKey, quarantine } = delivery;
    const { deliveryId, name } = event;
    report(
      { hooks: registry.errorHooks, logger },
      {
        level: 'error',
        message: 'hand-off enqueue failed',
        fields,
        error,
        phase: 'enqueue',
        ...(quarantine ? {} : { event }),
        deliveryId,
        dedupKey,
      },
    );
    return failed(service, 'handoff_unavailable', error, { deliveryId, event: name });
  }

  async function handOff(delivery: VerifiedDelivery): Promise<Verdict> {
    const { event, dedupKey, quarantine } = delivery;
    const { deliveryId, name } = event;
    const fields = { service, deliveryId, event: name, dedupKey };
    if (!quarantine && !event.known && registry.handlersFor(event).length === 0) {
      // An event this version does not know, and no onUnknown handler: acknowledged without a row,
      // as without the inbox (docs/inbox-quarantine.md "Unknown events"); its drift is counted all the same.
      if (delivery.drift) await countDrift(delivery, fields);
      emit(logger, 'debug', 'webhook ignored: no handler', fields);
      return accepted('ignored', service, deliveryId, name);
    }
    const headers: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const value = readHeaderString(delivery.headers, names[i]!);
      if (value !== undefined) headers[names[i]!] = value;
    }
    const direct = inbox.runInRequest !== undefined && !quarantine;
    // The trace of this request goes on in the worker (docs/observability.md).
    const traceparent = !direct && telemetry ? jobTraceparent(telemetry, logger, service) : undefined;
    const receipt: InboxReceipt = {
      service,
      event,
      dedupKey,
      receivedAt: delivery.receivedAt,
      body: delivery.body,
      headers,
      route: delivery.route,
      traceparent: traceparent ?? null,
      quarantine,
    };
    if (direct) {
      // Direct mode: the handlers run now on this request's parse; the run's verdict is the answer.
      const runner: InboxRequestRunner = {
        service,
        leaseMs,
        reportJobError,
        run: (runOptions) => runs().parsed(event, dedupKey, runOptions, delivery.route),
      };
      if (delivery.drift) await countDrift(delivery, fields);
      try {
        return await inbox.runInRequest!(receipt, runner);
      } catch (error) {
        return unavailable(error, delivery, fields);
      }
    }
    let result: EnqueueResult;
    try {
      // A write that finished at once (SQLite, its file free) has no timer or promise made for it.
      const at = boundAt(clock, delivery.receivedAt, timeoutMs);
      const written = inbox.storeDelivery(receipt);
      result = written instanceof Promise ? await pendingWithinBound(clock, at, timeoutMs, written) : written;
    } catch (error) {
      return unavailable(error, delivery, fields);
    }
    if (delivery.drift) await countDrift(delivery, fields);
    const kind = result === 'duplicate' ? 'duplicate' : 'queued';
    if (quarantine)
      emit(logger, 'warn', 'verified webhook failed validation: quarantined', {
        ...fields,
        code: quarantine.code,
      });
    else emit(logger, 'debug', `webhook ${kind} for a worker`, fields);
    return accepted(kind, service, deliveryId, name);
  }

  return Object.assign(handOff, { quarantines: true });
}
