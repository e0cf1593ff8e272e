/**
 * Assembles a receiver from a service spec: the handler registry, the receive path, the hand-off job
 * runner, and the web-standard `handle(Request)` that maps the verdict to HTTP at this edge. Each
 * service's factory (`createMailReceiver`, `createCrmReceiver`) resolves its options and calls it.
 *
 * The hand-off job (handoff/job/: codec, MAC, enqueue, `runJob`) loads only in apps that hand off:
 * the enqueue step when the receiver has a `handoff` target, `runJob` on a worker's first job.
 */
import { deliverySettings } from '../core/delivery/settings.js';
import { createHandlerRegistry, type DispatchableEvent } from '../core/handler-registry.js';
import type { ErrorHook, InvalidHook, WebhookHandler } from '../core/handler-types.js';
import { createReceivePath, type HandOff, type VerifiedDelivery } from '../core/receive-path.js';
import type { ReceiveInput } from '../core/receiver-types.js';
import { report } from '../core/report.js';
import type { ServiceSpec } from '../core/service-spec.js';
import { reportDeadLetter, telemetryEnabled } from '../core/telemetry.js';
import type { Verdict } from '../core/verdict.js';
import type { DedupStore } from '../dedup/types.js';
import type { RunJob } from '../handoff/job/run-job.js';
import type { HandoffRunner } from '../handoff/job/types.js';
import { isWebhookError } from '../shared/errors.js';
import { rememberBodyLimits } from './body-limits.js';
import { toResponse } from './http-answer.js';
import { createInboxHandOff, deliveryInboxOf } from './inbox-receipt.js';
import { createInboxRuns, type InboxRuns, isStoredDelivery, type RowRunOptions } from './inbox-runs.js';
import { observeReceive, observeRunJob } from './observe.js';
import type { ResolvedOptions } from './receiver-options.js';
import { RequestInput } from './request-input.js';

/**
 * What every adapter needs from a receiver (both services' receivers implement it): adapters hand over
 * the request (bytes or a `BodyReader`, headers, method, disconnect signal) and map the verdict to
 * HTTP; every refusal, including a body too large or too slow, is the receiver's.
 *
 * @example
 * ```ts
 * import { createMailReceiver, type WebhookReceiverLike } from '@svc/webhooks';
 *
 * const receiver: WebhookReceiverLike = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! });
 * const response: Response = await receiver.handle(request);
 * ```
 */
export interface WebhookReceiverLike {
  /** Which service this receiver is for. */
  readonly service: string;
  /**
   * The web-standard entry point: the verdict mapped to HTTP. On Cloudflare Workers pass the
   * execution context (`ctx`): handlers still running at their deadline, and the dedup store's
   * record of their outcome, are handed to its `waitUntil` (ReceiveInput.waitUntil).
   */
  handle(request: Request, ctx?: { waitUntil(promise: Promise<unknown>): void }): Promise<Response>;
  /** The lower-level entry point: the request in, the {@link Verdict} out. Never rejects. */
  receive(input: ReceiveInput): Promise<Verdict>;
}

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
  readonly service: string;
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

/** Builds a receiver; the service factories resolve options and the spec first. */
export function createReceiver<Known extends DispatchableEvent, Unknown extends DispatchableEvent>(
  spec: ServiceSpec<Known | Unknown>,
  options: ResolvedOptions,
): WebhookReceiver<Known, Unknown> {
  const { service } = spec;
  const { telemetry, logger, handoff } = options;
  const registry = createHandlerRegistry(spec.knownNames);
  // One scheduler per receiver: direct mode and the hand-off worker's jobs share these settings.
  const settings = deliverySettings(options, registry.errorHooks);
  // The inbox's runs (a claimed row run again, a delivery run in the request), built on first use.
  let inboxRuns: InboxRuns | undefined;
  const runsOfInbox = () => (inboxRuns ??= createInboxRuns(spec as ServiceSpec, options, registry, settings));
  const inbox = deliveryInboxOf(handoff);
  let handOff: HandOff | undefined;
  if (inbox) {
    // The database inbox stores the delivery itself: no job (inbox-receipt.ts).
    handOff = createInboxHandOff(spec as ServiceSpec, options, registry, inbox, runsOfInbox, (error, facts) =>
      receiver.reportJobError(error, facts),
    );
  } else if (handoff) {
    const step = import('../handoff/job/enqueue.js').then(({ createHandOff }) =>
      createHandOff(spec as ServiceSpec, options, registry.errorHooks, handoff),
    );
    step.catch(() => undefined); // a failed load answers each delivery through receive's catch
    handOff = async (delivery: VerifiedDelivery) => (await step)(delivery);
  }
  // With `onOutcome` or `telemetry`, each delivery is timed, traced and reported (observe.ts).
  const receive = observeReceive(
    service,
    options,
    createReceivePath(spec as ServiceSpec, options, registry, settings, handOff),
  );
  let jobRunner: Promise<RunJob> | undefined;
  const runJob: RunJob = async (job, runOptions, facts) => {
    // A row of the database inbox, run by its worker with the row as the claim (inbox-runs.ts).
    if (isStoredDelivery(job, runOptions))
      return runsOfInbox().stored(job, runOptions as RowRunOptions, facts);
    jobRunner ??= import('../handoff/job/run-job.js').then(({ createJobRunner }) =>
      createJobRunner(spec as ServiceSpec, options, registry, settings),
    );
    return (await jobRunner)(job, runOptions, facts);
  };
  const receiver: WebhookReceiver<Known, Unknown> = {
    service,
    leaseMs: options.leaseMs,
    dedup: options.dedup,
    receive,
    runJob: observeRunJob(service, options, runJob),
    reportJobError(error, info) {
      const { deliveryId, dedupKey, message } = info;
      if (info.deadLetter === true && telemetry && telemetryEnabled(telemetry, logger, service))
        reportDeadLetter(telemetry, logger, {
          service,
          code: isWebhookError(error) ? error.code : undefined,
        });
      report(settings, {
        level: 'error',
        message,
        fields: { service, deliveryId, dedupKey },
        error,
        phase: 'job',
        deliveryId,
        dedupKey,
      });
    },
    async handle(request, ctx) {
      // The receive path checks the method before it reads the body, and owns every refusal.
      return toResponse(await receive(new RequestInput(request, ctx)));
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
  rememberBodyLimits(receiver, options.maxBodyBytes, options.bodyTimeoutMs);
  return receiver;
}
