/**
 * A worker's run of one stored delivery (a queue engine's job, a database inbox row) once it is
 * authenticated and parsed: its handlers through `runDelivery`, or `no_handler` (refused, so the
 * engine dead-letters it and the inbox marks it `dead`, to re-drive after the deploy that registers a
 * handler) when this worker has none. Shared by `runJob` (handoff/job/run-job.ts) and the inbox's
 * runs (receiver/inbox-runs.ts).
 */
import type { Held } from '../../dedup/claims.js';
import { WebhookError } from '../../shared/errors.js';
import type { DispatchableEvent, HandlerRegistry } from '../handler-registry.js';
import type { DeliveryFacts } from '../lag.js';
import { emit } from '../logger.js';
import type { RouteSource } from '../route-secrets.js';
import { refused, type Verdict } from '../verdict.js';
import type { SignalSource } from './context.js';
import { type DeliverySettings, runDelivery } from './run.js';

/** One stored delivery as a worker runs it. */
export interface WorkerRun {
  readonly service: string;
  /** `'hand-off job'` or `'inbox row'`: names it in the log and the `no_handler` error. */
  readonly what: string;
  readonly event: DispatchableEvent;
  readonly dedupKey: string;
  /** Handler budget in ms (checked below the lease: core/delivery/budget.ts). */
  readonly timeoutMs: number;
  /**
   * The engine's run options as given (`signal`): the delivery's upstream, and the object the inbox
   * finds its open transaction by (`tx(context)`, inbox/run-row.ts): passed as is, never copied.
   */
  readonly upstream: SignalSource;
  readonly attempt?: number | undefined;
  readonly waitUntil?: ((work: Promise<unknown>) => void) | undefined;
  readonly route?: RouteSource | undefined;
  /** The inbox's open transaction, `context.tx`. */
  readonly tx?: unknown;
  /**
   * The inbox's row as the claim, taken only when the handlers run (a row refused here never holds
   * it); absent: the receiver's dedup store claims the delivery.
   */
  readonly hold?: (() => Held) | undefined;
  /** The outcome reporting's record of this run (core/lag.ts), when it reports one. */
  readonly facts?: DeliveryFacts | undefined;
}

/** Runs `run`'s handlers (never rejects), or refuses it `no_handler` when this worker has none. */
export function runInWorker(
  settings: DeliverySettings,
  registry: HandlerRegistry,
  run: WorkerRun,
): Promise<Verdict> {
  const { service, event, dedupKey, what } = run;
  const handlers = registry.handlersFor(event);
  if (handlers.length === 0) {
    const { deliveryId, name } = event;
    emit(settings.logger, 'warn', `${what} refused: no handler for its event in this worker`, {
      service,
      deliveryId,
      event: name,
      dedupKey,
    });
    const error = new WebhookError(
      'no_handler',
      `No handler for this ${what}'s event in this worker; re-drive it once one is registered.`,
    );
    return Promise.resolve(refused(service, error, { deliveryId, event: name }));
  }
  return Promise.resolve(
    runDelivery(settings, {
      service,
      event,
      handlers,
      dedupKey,
      startedAt: settings.clock.now(),
      timeoutMs: run.timeoutMs,
      upstream: run.upstream,
      attempt: run.attempt,
      waitUntil: run.waitUntil,
      route: run.route,
      tx: run.tx,
      held: run.hold?.(),
      facts: run.facts,
    }),
  );
}
