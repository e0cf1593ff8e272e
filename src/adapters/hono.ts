/**
 * @module
 * `@svc/webhooks/hono`: a receiver as a Hono handler, on every runtime Hono runs on, whatever
 * middleware read the body first.
 */
import { bodyTaken, rawBodyUnavailable } from '../core/raw-body-unavailable.js';
import { readRequestBody } from '../core/read-body.js';
import type { BodyReader } from '../core/receiver-types.js';
import type { WebhookReceiverLike } from '../receiver/create-receiver.js';
import { toResponse } from '../receiver/http-answer.js';
import { WebhookError } from '../shared/errors.js';
import { HonoInput } from './hono/hono-input.js';
import { type NodeServerRequest, nodeServerRequest, readNodeServerBody } from './hono/node-server-body.js';

/**
 * What the handler reads of a Hono `Context`, typed structurally (`hono` is not a dependency):
 * the web `Request` and the bodies Hono keeps after `c.req.arrayBuffer()`, `c.req.json()`, ….
 *
 * @example
 * ```ts
 * import type { HonoContextLike } from '@svc/webhooks/hono';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: HonoContextLike): HonoContextLike {
 *   return value;
 * }
 * ```
 */
export type HonoContextLike = {
  req: { raw: Request; bodyCache?: { arrayBuffer?: unknown; blob?: unknown } };
  /** On @hono/node-server, `{ incoming, outgoing }`: the Node request and response. */
  env?: unknown;
};

// Logged with the 500 raw_body_unavailable when a middleware read the body as text, JSON or a form.
const FIX =
  'Register the webhook route before any middleware that reads the body (c.req.json(), c.req.text(), a ' +
  'validator), or have that middleware call await c.req.arrayBuffer() first: Hono ' +
  'keeps those exact bytes and the receiver uses them. A body kept only as text, JSON or a form is not ' +
  'used: decoding can change the bytes the signature is over.';

/** The bytes Hono kept from `raw.arrayBuffer()` / `raw.blob()`: the request's own, unchanged. */
async function keptBytes(kept: unknown): Promise<Uint8Array> {
  let value: unknown;
  try {
    value = await kept;
    if (value instanceof Blob) value = await value.arrayBuffer();
  } catch (cause) {
    throw new WebhookError('body_unreadable', 'The request body could not be read to its end.', { cause });
  }
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Uint8Array) return value;
  throw rawBodyUnavailable(FIX);
}

function honoBody(req: HonoContextLike['req'], node: NodeServerRequest | undefined): BodyReader {
  const kept = req.bodyCache?.arrayBuffer ?? req.bodyCache?.blob;
  if (kept !== undefined) return () => keptBytes(kept);
  const request = req.raw;
  // On @hono/node-server the Node request itself, or the server's own read of it once the server built
  // a web request: a fraction of the cost of a web stream over it (docs/benchmarks.md "Hono and
  // Fastify"); it checks what was read before itself.
  if (node !== undefined) return (limits) => readNodeServerBody(request, node, limits, FIX);
  if (bodyTaken(request)) return () => Promise.reject(rawBodyUnavailable(FIX));
  return async ({ maxBodyBytes, bodyTimeoutMs }) => {
    const read = await readRequestBody(request, maxBodyBytes, bodyTimeoutMs);
    if (read instanceof Uint8Array) return read;
    throw read;
  };
}

/**
 * A Hono handler (usable as a route handler or a middleware; it always answers) for a receiver, or
 * for a function of the context returning one, called on the first request: on Cloudflare Workers
 * the secrets are bindings, in `c.env`. The body is read from `c.req.raw` within the receiver's
 * `maxBodyBytes` and `bodyTimeoutMs` (on `@hono/node-server`, a declared length from the Node request
 * itself, the connection cut after a 413 or 408). When a middleware read it first, the bytes Hono kept from
 * `c.req.arrayBuffer()` (or `c.req.blob()`) are used; a body kept only as text, JSON or a form is
 * refused with 500 `raw_body_unavailable` (the fix goes to the receiver's log), never re-encoded.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { createMailReceiver } from '@svc/webhooks';
 * import { createHonoMiddleware } from '@svc/webhooks/hono';
 *
 * const mail = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! });
 * const app = new Hono();
 * app.post('/webhooks/mail', createHonoMiddleware(mail)); // before middleware that reads bodies
 * ```
 */
export function createHonoMiddleware<C extends HonoContextLike>(
  receiver: WebhookReceiverLike | ((c: C) => WebhookReceiverLike),
): (c: C) => Promise<Response> {
  let ready = typeof receiver === 'function' ? undefined : receiver;
  return async (c) => {
    ready ??= (receiver as (c: C) => WebhookReceiverLike)(c);
    const request = c.req.raw;
    const node = nodeServerRequest(request, c.env);
    // On @hono/node-server the Node headers as they are: its web `Headers` check and normalise every
    // name and value on each read.
    const headers = node === undefined ? request.headers : node.incoming.headers;
    const verdict = await ready.receive(new HonoInput(honoBody(c.req, node), headers, request));
    return toResponse(verdict);
  };
}
