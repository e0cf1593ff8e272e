/**
 * One Node request through a receiver, in one translation: the receive input (the bytes a parser
 * kept or a reader of the stream, headers, method, a disconnect signal made on first read), and the
 * verdict's HTTP answer written to the `ServerResponse`. The stream reader is `read-body.ts`.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { BodyLimits, BodyReader, ReceiveInput } from '../../core/receiver-types.js';
import { failed, type Verdict } from '../../core/verdict.js';
import type { WebhookReceiverLike } from '../../receiver/create-receiver.js';
import { type HttpAnswer, httpAnswer } from '../../receiver/http-answer.js';
import { WebhookError } from '../../shared/errors.js';
import { disconnectSignal } from './disconnect-signal.js';
import { lingerThenClose } from './linger.js';
import { readNodeBody } from './read-body.js';

/**
 * A Node request as frameworks hand it over: maybe with a body a parser already produced
 * (`express.raw()` leaves a `Buffer` in `body`; a `verify` hook can keep one in `rawBody`).
 *
 * @example
 * ```ts
 * import type { NodeRequestLike } from '@svc/webhooks/node';
 *
 * const hasRawBody = (req: NodeRequestLike) => req.rawBody instanceof Uint8Array;
 * ```
 */
export type NodeRequestLike = IncomingMessage & { body?: unknown; rawBody?: unknown };

/**
 * Runs one Node request through a receiver: the body (the bytes a parser kept, or a reader of the
 * stream the receiver calls with its own limits), headers, method and a disconnect signal in, the
 * verdict's HTTP answer written to `res`. Never rejects: the receiver answers every refusal
 * (`body_too_large` 413, `body_timeout` 408, `body_unreadable` 400, `raw_body_unavailable` 500, with
 * `fix` in its log only) and an upload left unread is cut after the answer. The handlers' `signal`
 * aborts if the client disconnects before the answer. The Express adapter and the Next.js Pages
 * Router adapter are this function plus a framework `fix`.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { handleNodeRequest } from '@svc/webhooks/node';
 *
 * createServer((req, res) => void handleNodeRequest(mailReceiver, req, res));
 * ```
 */
export async function handleNodeRequest(
  receiver: WebhookReceiverLike,
  req: NodeRequestLike,
  res: ServerResponse,
  fix = 'Give the webhook route the unparsed request.',
): Promise<void> {
  let verdict: Verdict;
  try {
    // No Request/Response objects on this path: Node headers go to the receiver as they are.
    verdict = await receiver.receive(new NodeInput(nodeBodyInput(req, fix), req, res));
  } catch (error) {
    // Our receivers never reject; one built elsewhere might (or throw), and must still get an answer.
    verdict = failed(receiver.service, 'internal_error', error);
  }
  // An upload the receiver stopped reading (or never read): answer, then cut the connection instead
  // of reading it all.
  if (!req.readableEnded) lingerThenClose(req, res);
  writeAnswer(res, httpAnswer(verdict));
}

/**
 * `ReceiveInput.body` for a Node request: the bytes a parser kept (`req.rawBody` from a `verify`
 * hook, `express.raw()`'s `req.body`), or a reader of the unread stream the receiver calls with its
 * limits, or a reader refusing with `raw_body_unavailable` (a parser consumed the stream and kept no
 * bytes; `fix` goes to the receiver's log).
 */
export function nodeBodyInput(req: NodeRequestLike, fix: string): Uint8Array | BodyReader {
  const kept = req.rawBody instanceof Uint8Array ? req.rawBody : req.body;
  if (kept instanceof Uint8Array) return kept;
  // A parser that skipped this request (other content type, no body) left the stream unread.
  if (!req.readableEnded && !req.destroyed) {
    return (limits: BodyLimits) => readNodeBody(req, limits.maxBodyBytes, limits.bodyTimeoutMs);
  }
  return () => Promise.reject(rawBodyUnavailable(fix));
}

function rawBodyUnavailable(fix: string): WebhookError {
  // The fix is for whoever runs the receiver, not for the sender: it goes to the log via `cause`.
  return new WebhookError(
    'raw_body_unavailable',
    'The receiver could not read the raw request body; its log names the configuration to fix.',
    {
      cause: new Error(
        `A body parser consumed the request before the webhook route and kept no raw bytes, so the signature cannot be checked. ${fix}`,
      ),
    },
  );
}

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

/**
 * Sends an {@link HttpAnswer} on a Node `ServerResponse` (status, headers, JSON body with its
 * `content-length`). Does nothing if the response was already sent.
 */
export function writeAnswer(res: ServerResponse, answer: HttpAnswer): void {
  if (res.headersSent || res.writableEnded) return;
  const { body } = answer;
  res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
