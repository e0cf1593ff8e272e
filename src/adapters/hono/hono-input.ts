import type { BodyReader, HeadersInput, ReceiveInput } from '../../core/receiver-types.js';

/**
 * The receive input of one Hono request: its body reader, headers and method, and the request's
 * signal read on first use. A class rather than an object literal with a `get signal()`: defining
 * that getter (a new closure each time) on a fresh object took a runtime call and left the young
 * generation's collector more to visit, about 26,000 instructions per request on @hono/node-server
 * (docs/benchmarks.md "Hono and Fastify: where the adapters' instructions go").
 */
export class HonoInput implements ReceiveInput {
  declare readonly body: BodyReader;
  declare readonly headers: HeadersInput;
  declare readonly method: string;
  declare private readonly _request: Request;

  constructor(body: BodyReader, headers: HeadersInput, request: Request) {
    this.body = body;
    this.headers = headers;
    this.method = request.method;
    this._request = request;
  }

  /** Made on first read (on @hono/node-server an `AbortController` per request): most deliveries never need it. */
  get signal(): AbortSignal {
    return this._request.signal;
  }
}
