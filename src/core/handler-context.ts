/**
 * The context object a delivery's handlers get, which also owns the delivery's deadline. A class
 * rather than closures because one is built per request on the hot path: the `AbortController` and
 * the bound log are created only when a handler reads `signal` or `log`.
 */
import type { Clock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import type { HandlerContext } from './handler-types.js';
import { bindLog, type HandlerLog, type LogFields, type Logger } from './logger.js';

/** What the pipeline needs besides the public {@link HandlerContext}. */
export class DeliveryContext implements HandlerContext {
  readonly deadline: number;
  readonly deliveryId: string;
  readonly idempotencyKey: string;
  /** Bound, so handlers may destructure it. */
  readonly timeLeftMs: () => number;
  /** Hand-off workers only: the engine's attempt number. */
  attempt?: number;
  #controller: AbortController | undefined;
  #reason: unknown;
  #upstream: AbortSignal | undefined;
  #onUpstreamAbort: (() => void) | undefined;
  #log: HandlerLog | undefined;
  #logger: Logger | undefined;
  #fields: LogFields | undefined;
  readonly #service: 'mail' | 'crm';
  readonly #event: string;

  constructor(
    clock: Clock,
    deadline: number,
    service: 'mail' | 'crm',
    event: string,
    deliveryId: string,
    idempotencyKey: string,
    upstream: AbortSignal | undefined,
    logger: Logger | undefined,
  ) {
    this.deadline = deadline;
    this.deliveryId = deliveryId;
    this.idempotencyKey = idempotencyKey;
    this.timeLeftMs = () => Math.max(0, deadline - clock.now());
    this.#logger = logger;
    this.#service = service;
    this.#event = event;
    if (upstream) {
      // The sender disconnected (its own timeout, or it gave up): handlers should stop too.
      if (upstream.aborted) this.#reason = upstream.reason ?? new Error('aborted');
      else {
        this.#upstream = upstream;
        this.#onUpstreamAbort = () => this.#abort(upstream.reason ?? new Error('aborted'));
        upstream.addEventListener('abort', this.#onUpstreamAbort, { once: true });
      }
    }
  }

  /** @deprecated The former name of {@link idempotencyKey}. */
  get attemptKey(): string {
    return this.idempotencyKey;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
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
      key: this.idempotencyKey,
    };
    return this.#fields;
  }

  /** The deadline passed: abort with a `handler_timeout` reason. */
  expire(): void {
    this.#abort(
      new WebhookError('handler_timeout', 'The handler deadline passed; the sender stops waiting at 10 s.'),
    );
  }

  /** Detaches from the request's signal once the handlers settled. */
  dispose(): void {
    if (this.#upstream && this.#onUpstreamAbort)
      this.#upstream.removeEventListener('abort', this.#onUpstreamAbort);
    this.#upstream = undefined;
  }

  #abort(reason: unknown): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
