import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { BodyReader, ReceiveInput } from '../../core/receiver-types.js';
import { disconnectSignal } from './disconnect-signal.js';

/**
 * The receive input of one Node request: its body (bytes or a reader), headers and method, and the
 * disconnect signal made on first read. Handlers seldom read `signal`, and an `AbortController` plus
 * a `close` listener per request was the largest cost of the Node adapters' own (docs/benchmarks.md).
 */
export class NodeInput implements ReceiveInput {
  declare readonly body: Uint8Array | BodyReader;
  declare readonly headers: IncomingHttpHeaders;
  declare readonly method: string | undefined;
  declare private readonly _res: ServerResponse;
  declare private _signal: AbortSignal | undefined;
  declare private readonly _req: IncomingMessage & { originalUrl?: unknown; params?: unknown };

  constructor(body: Uint8Array | BodyReader, req: IncomingMessage, res: ServerResponse) {
    this.body = body;
    this.headers = req.headers;
    this.method = req.method;
    this._res = res;
    this._signal = undefined;
    this._req = req;
  }

  /** The pathname (Express's `originalUrl`, as a mounted router rewrites `url`), for a `secret` function. */
  get path(): string {
    const { originalUrl, url } = this._req;
    const target = typeof originalUrl === 'string' ? originalUrl : (url ?? '/');
    const query = target.indexOf('?');
    return query === -1 ? target : target.slice(0, query);
  }

  /** The framework's route parameters (Express `req.params`), for a `secret` function. */
  get params(): Readonly<Record<string, string>> {
    const { params } = this._req;
    return typeof params === 'object' && params !== null ? (params as Record<string, string>) : {};
  }

  get signal(): AbortSignal {
    this._signal ??= disconnectSignal(this._res);
    return this._signal;
  }
}
