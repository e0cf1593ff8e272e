/**
 * The context object a delivery's handlers get, which also owns the delivery's deadline. A class
 * rather than closures because one is built per request on the hot path: the `AbortController`, the
 * listener on the request's signal, `timeLeftMs` and the bound log are created only when a handler
 * reads `signal`, `timeLeftMs` or `log`.
 */
import type { Clock } from '../../shared/clock.js';
import { WebhookError } from '../../shared/errors.js';
import type { HandlerContext } from '../handler-types.js';
import { bindLog, type HandlerLog, type LogFields, type LogSink } from '../logger.js';
import { type RouteSource, routeOf, type SecretRequest } from '../route-secrets.js';

/**
 * Where the signal of whoever waits for the verdict is read (a request's input, a job's options).
 * Read only when a handler reads `signal` or the delivery is cut short, so an adapter may make the
 * signal on first read (most handlers never read it).
 */
export interface SignalSource {
  readonly signal?: AbortSignal | undefined;
}

/** What a context is built from: one delivery's facts, deadline and receiver settings. */
export interface ContextSource {
  /** The delivery's deadline, epoch ms on `clock`. */
  readonly at: number;
  readonly clock: Clock;
  readonly logger: LogSink | undefined;
  readonly service: string;
  readonly event: { readonly name: string; readonly deliveryId: string };
  readonly dedupKey: string;
  readonly upstream: SignalSource | undefined;
  readonly attempt?: number | undefined;
  readonly tx?: unknown;
  /** Where the route the delivery arrived on is read (the request's input, a job's `route`). */
  readonly route?: RouteSource | undefined;
}

/**
 * Contexts given the app's transaction (`RunJobOptions.tx`), each to the `runJob` options of its run
 * (run-job.ts passes them as the delivery's `upstream`): how the database inbox's `tx(context)` knows
 * a context of one of its own open transactions from any other (inbox/run-row.ts).
 */
const transactionRuns = new WeakMap<HandlerContext, object>();

/** The `runJob` options of the run whose transaction `context` was given, if any. */
export function transactionRunOf(context: HandlerContext): object | undefined {
  return transactionRuns.get(context);
}

/** What the pipeline needs besides the public {@link HandlerContext}. */
export class DeliveryContext implements HandlerContext {
  readonly deadline: number;
  readonly deliveryId: string;
  readonly dedupKey: string;
  /** Hand-off workers only: the engine's attempt number. */
  attempt?: number;
  /** Inbox workers only: the app's transaction (docs/inbox.md). */
  tx?: unknown;
  readonly #clock: Clock;
  #controller: AbortController | undefined;
  #reason: unknown;
  /** Holds the request's signal, until the handlers settled (then {@link dispose} took its reason, if any). */
  #upstream: SignalSource | undefined;
  /** The request's signal once read, while this context listens to it. */
  #upstreamSignal: AbortSignal | undefined;
  #onUpstreamAbort: (() => void) | undefined;
  #timeLeftMs: (() => number) | undefined;
  #log: HandlerLog | undefined;
  #logger: LogSink | undefined;
  #fields: LogFields | undefined;
  readonly #service: string;
  readonly #event: string;
  #routeSource: RouteSource | undefined;
  #route: SecretRequest | undefined;

  constructor(source: ContextSource) {
    const { event } = source;
    this.deadline = source.at;
    this.deliveryId = event.deliveryId;
    this.dedupKey = source.dedupKey;
    if (source.attempt !== undefined) this.attempt = source.attempt;
    if (source.tx !== undefined) {
      this.tx = source.tx;
      if (source.upstream !== undefined) transactionRuns.set(this, source.upstream);
    }
    this.#clock = source.clock;
    this.#logger = source.logger;
    this.#service = source.service;
    this.#event = event.name;
    // The sender disconnected (its own timeout, or it gave up): handlers should stop too. Nothing
    // reads the request's signal until a handler reads `signal`; until then its state is read when
    // it matters (expire, a lost lease), which keeps the first reason first without a listener.
    this.#upstream = source.upstream;
    // Read on first use: an adapter computes the path only then.
    this.#routeSource = source.route;
  }

  /** The route the delivery arrived on, built on first read. */
  get route(): SecretRequest | undefined {
    if (this.#route === undefined && this.#routeSource !== undefined) {
      this.#route = routeOf(this.#routeSource);
      this.#routeSource = undefined;
    }
    return this.#route;
  }

  /** Bound, so handlers may destructure it; built on first read. */
  get timeLeftMs(): () => number {
    this.#timeLeftMs ??= () => this.remainingMs();
    return this.#timeLeftMs;
  }

  /** Milliseconds until the deadline (0 once it passed). */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.#clock.now());
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      this.#takeUpstreamAbort();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
      else {
        const upstream = this.#upstream?.signal;
        if (upstream === undefined) return this.#controller.signal;
        this.#upstreamSignal = upstream;
        this.#onUpstreamAbort = () => this.#abort(upstream.reason ?? new Error('aborted'));
        upstream.addEventListener('abort', this.#onUpstreamAbort, { once: true });
      }
    }
    return this.#controller.signal;
  }

  get log(): HandlerLog {
    this.#log ??= bindLog(this.#logger, this.fields());
    return this.#log;
  }

  /** The delivery's log fields, built on first use: most requests never log. */
  fields(): LogFields {
    this.#fields ??= {
      service: this.#service,
      deliveryId: this.deliveryId,
      event: this.#event,
      dedupKey: this.dedupKey,
    };
    return this.#fields;
  }

  /** The deadline passed: abort with a `handler_timeout` reason (unless the sender went first). */
  expire(): void {
    this.#takeUpstreamAbort();
    this.#abort(
      new WebhookError('handler_timeout', 'The handler deadline passed; the sender stops waiting at 10 s.'),
    );
  }

  /** The claim's lease was lost (lease.ts): abort with `error` (`lease_lost`), another run may start. */
  loseLease(error: WebhookError): void {
    this.#takeUpstreamAbort();
    this.#abort(error);
  }

  /**
   * Detaches from the request's signal once the handlers settled. A context whose `signal` no handler
   * read drops its source unread (an adapter makes the request's signal on first read): read later,
   * its signal tells only of the deadline or a lost lease.
   */
  dispose(): void {
    const upstream = this.#upstreamSignal;
    if (upstream === undefined) {
      this.#upstream = undefined;
      return;
    }
    this.#takeUpstreamAbort();
    upstream.removeEventListener('abort', this.#onUpstreamAbort!);
    this.#upstreamSignal = undefined;
    this.#upstream = undefined;
  }

  /** An abort of the request's signal that no listener has seen yet becomes this context's reason. */
  #takeUpstreamAbort(): void {
    if (this.#reason !== undefined) return;
    const upstream = this.#upstreamSignal ?? this.#upstream?.signal;
    if (upstream?.aborted) this.#reason = upstream.reason ?? new Error('aborted');
  }

  #abort(reason: unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
