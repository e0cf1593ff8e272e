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

  constructor(body: Uint8Array | BodyReader, req: IncomingMessage, res: ServerResponse) {
    this.body = body;
    this.headers = req.headers;
    this.method = req.method;
    this._res = res;
    this._signal = undefined;
  }

  get signal(): AbortSignal {
    this._signal ??= disconnectSignal(this._res);
    return this._signal;
  }
}
