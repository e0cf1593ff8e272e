/**
 * The receive input of a web `Request` (`receiver.handle`): its body, read on demand within the
 * receiver's limits, its headers, method and disconnect signal, and its pathname, parsed from the URL
 * only when something reads `path` (a `secret` function, a `routeTenant`, a handler's
 * `context.route`, a hand-off job's `route`). A URL parse costs more than the rest of the input, and
 * a class, because an object literal with a getter costs as much to create as the parse it saves.
 */
import { bodyTaken, rawBodyUnavailable } from '../core/raw-body-unavailable.js';
import { readRequestBody } from '../core/read-body.js';
import type { BodyLimits, ReceiveInput } from '../core/receiver-types.js';

// Logged with the 500 raw_body_unavailable when `handle(request)` gets a request whose body was read.
const TAKEN_FIX =
  'Hand the receiver the request before anything reads its body (request.json(), request.text(), ' +
  "request.formData(), a framework's body helper or validator); code that needs the body first can read " +
  'request.clone() instead. Or pass the exact bytes to receiver.receive({ body, headers }).';

/** One web `Request` as the receive path reads it. */
export class RequestInput implements ReceiveInput {
  declare readonly headers: Headers;
  declare readonly method: string;
  declare readonly signal: AbortSignal;
  declare readonly waitUntil: ((work: Promise<unknown>) => void) | undefined;
  declare private readonly _request: Request;

  constructor(request: Request, ctx: { waitUntil(promise: Promise<unknown>): void } | undefined) {
    this.headers = request.headers;
    this.method = request.method;
    this.signal = request.signal;
    this.waitUntil = typeof ctx?.waitUntil === 'function' ? (work) => ctx.waitUntil(work) : undefined;
    this._request = request;
  }

  /** The body's bytes (the receive path calls it after the method check, with its limits). */
  async body({ maxBodyBytes, bodyTimeoutMs }: BodyLimits): Promise<Uint8Array> {
    const request = this._request;
    // A route whose framework, hook or middleware read the body first: the documented refusal with
    // its fix, not a TypeError about a locked stream.
    if (bodyTaken(request)) throw rawBodyUnavailable(TAKEN_FIX);
    const read = await readRequestBody(request, maxBodyBytes, bodyTimeoutMs);
    if (read instanceof Uint8Array) return read;
    throw read;
  }

  /** The URL's pathname, parsed on each read (the readers keep what they read). */
  get path(): string {
    return new URL(this._request.url).pathname;
  }
}
