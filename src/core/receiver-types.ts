/**
 * @module
 * What the pipeline takes from one request: the body (bytes, or a reader the receiver calls with its
 * limits), the headers, the method and a disconnect signal. What it gives back is a `Verdict`
 * (verdict.ts).
 */

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
 * const describe = ({ maxBodyBytes, bodyTimeoutMs }: BodyLimits) => `${maxBodyBytes} bytes within ${bodyTimeoutMs} ms`;
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
  /**
   * Keeps the runtime serving work that goes on after the answer: Cloudflare Workers' `ctx.waitUntil`
   * (the fetch adapter passes it). Given handlers still running at the deadline (answered 503
   * `handler_timeout`) and a dedup store write not settled by then, so their outcome is recorded
   * instead of being cut off with the request. Not needed where the process outlives the request.
   */
  waitUntil?: (work: Promise<unknown>) => void;
  /**
   * The URL's pathname (`/webhooks/crm/acme`), read only by a `secret` function (`SecretRequest`);
   * every adapter passes it. Default `/`.
   */
  path?: string;
  /** The framework's route parameters (Express `req.params`), read only by a `secret` function. */
  params?: Readonly<Record<string, string>>;
}
