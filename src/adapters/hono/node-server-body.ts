/**
 * The body of a Hono request served by `@hono/node-server` with a declared length within the limit:
 * read from the Node request as the Node adapters read it when nothing touched the server's request
 * yet, else through the server's own direct read (`c.req.raw.arrayBuffer()`: the Node request's
 * chunks, no web stream over them) with the body deadline on one shared timer; either way the
 * connection is cut once the answer is out when the read stopped early. Everywhere else (Bun, Deno,
 * workerd, an undeclared length, a request a middleware replaced) the web stream reader is used.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { rawBodyUnavailable } from '../../core/raw-body-unavailable.js';
import type { BodyLimits } from '../../core/receiver-types.js';
import { bodyTimeout, bodyTooLarge } from '../../shared/body-errors.js';
import { systemClock } from '../../shared/clock.js';
import { WebhookError } from '../../shared/errors.js';
import { TimeoutEntry } from '../../shared/scheduler.js';
import { lingerThenClose } from '../node/linger.js';
import { bodyDeadlines as deadlines, readNodeBody } from '../node/read-body.js';

/** The Node request and response @hono/node-server hands every request as `c.env`. */
export interface NodeServerRequest {
  readonly incoming: IncomingMessage;
  readonly outgoing: ServerResponse;
  /** The declared `Content-Length`. */
  readonly length: number;
}

type Bindings = { incoming?: Partial<IncomingMessage>; outgoing?: Partial<ServerResponse> };

/**
 * `c.env`'s Node request and response when `request` is the request @hono/node-server made for them
 * (not one a middleware put in its place), over HTTP/1 (cutting an HTTP/2 request's socket would cut
 * its whole session), with a declared length (Node's parser then delivers exactly that many bytes, so
 * reading them whole is bounded). Anything else is read through the web stream reader.
 */
export function nodeServerRequest(request: Request, env: unknown): NodeServerRequest | undefined {
  const { incoming, outgoing } = (env ?? {}) as Bindings;
  if (typeof incoming !== 'object' || incoming === null || incoming.httpVersionMajor !== 1) return undefined;
  if (typeof outgoing?.once !== 'function') return undefined;
  // @hono/node-server's request is an object of its own whose prototype extends Request's; a
  // `new Request(…)` a middleware made from it has Request's prototype itself.
  if (Object.getPrototypeOf(request) === Request.prototype) return undefined;
  const length = declaredLength((incoming.headers as IncomingHttpHeaders)['content-length']);
  if (length === -1) return undefined;
  return { incoming: incoming as IncomingMessage, outgoing: outgoing as ServerResponse, length };
}

/** A `Content-Length` of 1 to 15 digits as a number, else -1 (a loop: a regular expression per request cost more). */
function declaredLength(declared: string | undefined): number {
  if (declared === undefined || declared.length === 0 || declared.length > 15) return -1;
  let length = 0;
  for (let i = 0; i < declared.length; i++) {
    const digit = declared.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    length = length * 10 + digit;
  }
  return length;
}

/**
 * Reads the body of a {@link nodeServerRequest} within `limits`: a declared length over the limit is
 * refused unread (413), a body still incomplete at the deadline answered 408 while the server's read,
 * bounded by the declared length, is left to end when the connection is cut after the answer.
 */
export function readNodeServerBody(
  request: Request,
  { incoming, outgoing, length }: NodeServerRequest,
  { maxBodyBytes, bodyTimeoutMs }: BodyLimits,
  fix: string,
): Promise<Uint8Array> {
  if (length > maxBodyBytes) return Promise.reject(stopped(bodyTooLarge(maxBodyBytes)));
  // Read before (`c.req.raw.text()` in a middleware): the server's request says so without reading.
  if (request.bodyUsed) return Promise.reject(rawBodyUnavailable(fix));
  // Nothing of the server's request touched yet, and the Node request still unread (a host that read
  // it keeps the bytes as `incoming.rawBody`, which the server's read serves): read it as the Node
  // adapters do (its chunks kept as they are, no copy into an ArrayBuffer, one promise).
  if (!incoming.readableDidRead && !('rawBody' in incoming) && untouched(request)) {
    return readNodeBody(incoming, maxBodyBytes, bodyTimeoutMs).catch((error: WebhookError) => {
      throw stopped(error);
    });
  }
  return new Promise((resolve, reject) => {
    const deadline = new TimeoutEntry(() => reject(stopped(bodyTimeout(bodyTimeoutMs))));
    deadlines.add(deadline, systemClock.now() + bodyTimeoutMs);
    request.arrayBuffer().then(
      (bytes) => {
        deadlines.remove(deadline);
        resolve(new Uint8Array(bytes));
      },
      (cause: unknown) => {
        deadlines.remove(deadline);
        reject(stopped(unread(cause, fix)));
      },
    );
  });

  /** The refusal, with the rest of the upload discarded once the answer is out, then cut. */
  function stopped(error: WebhookError): WebhookError {
    if (!incoming.readableEnded) lingerThenClose(incoming, outgoing);
    return error;
  }
}

// The own keys of @hono/node-server's request that leave its body to the Node request: the request,
// its method and URL, the web `Headers` over the Node headers and the `AbortController` of its signal.
// Any other (the web `Request` a `clone()` or a read of `body` builds, a direct read begun) or a
// server that names them differently: the server's own read, which knows what it did.
const UNTOUCHED = new Set(['incomingKey', 'methodKey', 'urlKey', 'headersKey', 'abortControllerKey']);

function untouched(request: Request): boolean {
  for (const key of Object.getOwnPropertySymbols(request)) {
    if (!UNTOUCHED.has(key.description ?? '')) return false;
  }
  return true;
}

/**
 * Why the server's read failed: a body a middleware locked (a reader holding `c.req.raw.body`) or
 * read is refused as `raw_body_unavailable`, as on the stream path; anything else (the client went
 * away) is `body_unreadable`.
 */
function unread(cause: unknown, fix: string): WebhookError {
  if (cause instanceof TypeError && cause.message.startsWith('Body is unusable'))
    return rawBodyUnavailable(fix);
  return new WebhookError('body_unreadable', 'The request body could not be read to its end.', { cause });
}
