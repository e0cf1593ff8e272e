/**
 * @module
 * The contract between receivers and adapters: the body (bytes, or a reader the receiver calls with its
 * limits) and headers in, an outcome (status, headers, small JSON body) out. Adapters for Node servers write the outcome directly; `handle(Request)` turns
 * it into a `Response`.
 */
import type { WebhookErrorCode } from '../shared/errors.js';

/**
 * Request headers as any server hands them over: a web `Headers`, or Node's `IncomingHttpHeaders`
 * (lowercase names, `string | string[]` values).
 *
 * @example
 * ```ts
 * import type { HeadersInput } from '@svc/webhooks';
 *
 * const web: HeadersInput = new Headers({ 'X-SvcMAIL-Id': 'dlv_1' });
 * const node: HeadersInput = { 'x-svcmail-id': 'dlv_1', 'x-forwarded-for': ['10.0.0.1', '10.0.0.2'] };
 * ```
 */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The limits a receiver reads a body within; a {@link BodyReader} gets them from the receiver.
 *
 * @example
 * ```ts
 * import type { BodyLimits } from '@svc/webhooks';
 *
 * const limits: BodyLimits = { maxBodyBytes: 1_048_576, bodyTimeoutMs: 5_000 };
 * ```
 */
export interface BodyLimits {
  /** Largest body accepted, in bytes: stop reading past it and reject with `body_too_large`. */
  readonly maxBodyBytes: number;
  /** Time allowed to receive the whole body, in ms: past it reject with `body_timeout`. */
  readonly bodyTimeoutMs: number;
}

/**
 * Reads a request body for the receiver, within the limits the receiver passes. Resolves with the
 * exact bytes; rejects with a `WebhookError` when it cannot (`body_too_large`, `body_timeout`,
 * `body_unreadable`, `raw_body_unavailable`): the receiver turns that into its answer and logs it,
 * the error's `cause` (e.g. the fix for a misconfigured route) in the log only. Adapters pass one
 * when the body is still a stream, so the receiver applies its own limits.
 *
 * @example
 * ```ts
 * import type { BodyReader } from '@svc/webhooks';
 * import { readNodeBody } from '@svc/webhooks/node';
 *
 * const body: BodyReader = ({ maxBodyBytes, bodyTimeoutMs }) => readNodeBody(req, maxBodyBytes, bodyTimeoutMs);
 * const outcome = await receiver.receive({ body, headers: req.headers, method: req.method });
 * ```
 */
export type BodyReader = (limits: BodyLimits) => Promise<Uint8Array>;

/**
 * What a receiver needs from one request.
 *
 * @example
 * ```ts
 * import type { ReceiveInput } from '@svc/webhooks';
 *
 * const input: ReceiveInput = { body: new Uint8Array(await request.arrayBuffer()), headers: request.headers };
 * const outcome = await receiver.receive(input);
 * ```
 */
export interface ReceiveInput {
  /**
   * The exact body bytes received, or a {@link BodyReader} the receiver calls with its limits (after
   * the method check, so a wrong method is answered without reading the body).
   */
  body: Uint8Array | BodyReader;
  headers: HeadersInput;
  /** HTTP method; anything but POST is answered 405. Omit when the route already restricts it. */
  method?: string;
  /**
   * Aborted when the client disconnects before the answer is sent (every adapter passes one); handlers
   * see it through their own signal.
   */
  signal?: AbortSignal;
}

/**
 * How a request ended, from the receiver's point of view.
 *
 * @example
 * ```ts
 * import type { ReceiveResult } from '@svc/webhooks';
 *
 * const acknowledged = (result: ReceiveResult) => ['processed', 'ignored', 'duplicate'].includes(result);
 * ```
 */
export type ReceiveResult =
  /** A handler ran and the delivery was marked completed. */
  | 'processed'
  /** An event with no handler registered, or an unknown event name: acknowledged so the sender stops. */
  | 'ignored'
  /** Already completed earlier: acknowledged, no handler ran. */
  | 'duplicate'
  /** Hand-off mode: written to the queue engine, which confirmed it; a worker runs the handlers. */
  | 'queued'
  /** Another attempt of the same delivery holds the claim: the sender should retry later. */
  | 'in_progress'
  /** Refused before any handler ran (signature, size, shape, method). */
  | 'rejected'
  /** A handler threw or timed out; the claim was released so the retry runs it again. */
  | 'failed'
  /** The dedup store could not be reached; failed closed. */
  | 'unavailable';

/**
 * The response a receiver wants sent. Never a 3xx (the services do not follow redirects).
 *
 * @example
 * ```ts
 * import type { ReceiveOutcome } from '@svc/webhooks';
 *
 * const outcome: ReceiveOutcome = await receiver.receive({ body, headers: req.headers });
 * res.writeHead(outcome.status, outcome.headers).end(outcome.body ?? undefined);
 * ```
 */
export interface ReceiveOutcome {
  status: number;
  /** Lowercase header names, e.g. `content-type`, `retry-after`. */
  headers: Record<string, string>;
  /** The JSON text of the body, or `null` for an empty body. */
  body: string | null;
  result: ReceiveResult;
  /** The error code, for every result but `processed`, `ignored` and `duplicate`. */
  code?: WebhookErrorCode;
  /** The delivery id, when the request got far enough to read it. */
  deliveryId?: string;
  /** The event name, when the request got far enough to read it. */
  event?: string;
}

/**
 * What every adapter needs from a receiver (both services' receivers implement it): adapters hand over
 * the request (bytes or a {@link BodyReader}, headers, method, disconnect signal) and write the outcome
 * back; every refusal, including a body too large or too slow, is the receiver's.
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
  readonly service: 'mail' | 'crm';
  /** The web-standard entry point. */
  handle(request: Request): Promise<Response>;
  /** The lower-level entry point: the request in, an outcome out. Never rejects. */
  receive(input: ReceiveInput): Promise<ReceiveOutcome>;
}
