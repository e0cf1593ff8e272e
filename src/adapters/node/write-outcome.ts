import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ReceiveOutcome } from '../../core/receiver-types.js';

// The receivers' outcome headers are shared frozen objects and their bodies a small set of strings
// (src/core/outcomes.ts), so the headers written, `content-length` included, are built once per pair
// rather than per request. Headers that are not frozen may change between requests: never cached.
const BODIES_PER_HEADERS = 64;
const written = new WeakMap<Record<string, string>, Map<string | null, OutgoingHttpHeaders>>();

function headersOf(outcome: ReceiveOutcome): OutgoingHttpHeaders {
  const { headers, body } = outcome;
  const frozen = Object.isFrozen(headers);
  let byBody = frozen ? written.get(headers) : undefined;
  let all = byBody?.get(body);
  if (all === undefined) {
    all = { ...headers, 'content-length': body === null ? 0 : Buffer.byteLength(body) };
    if (frozen) {
      if (byBody === undefined) {
        byBody = new Map();
        written.set(headers, byBody);
      }
      if (byBody.size < BODIES_PER_HEADERS) byBody.set(body, all);
    }
  }
  return all;
}

/**
 * Sends a receiver's {@link ReceiveOutcome} on a Node `ServerResponse` (status, headers, JSON body
 * with its `content-length`). Does nothing if the response was already sent.
 *
 * @example
 * ```ts
 * import { writeOutcome } from '@svc/webhooks/node';
 *
 * writeOutcome(res, await receiver.receive({ body, headers: req.headers }));
 * ```
 */
export function writeOutcome(res: ServerResponse, outcome: ReceiveOutcome): void {
  if (res.headersSent || res.writableEnded) return;
  res.writeHead(outcome.status, headersOf(outcome));
  res.end(outcome.body ?? undefined);
}

/**
 * Sends a web `Response` on a Node `ServerResponse` (status, headers, whole body). For the small
 * JSON responses receivers give; not a general streaming bridge.
 *
 * @example
 * ```ts
 * import { writeResponse } from '@svc/webhooks/node';
 *
 * await writeResponse(res, await receiver.handle(request));
 * ```
 */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = response.body === null ? null : new Uint8Array(await response.arrayBuffer());
  if (res.headersSent || res.writableEnded) return;
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  headers['content-length'] = String(body?.byteLength ?? 0);
  res.writeHead(response.status, headers);
  res.end(body ?? undefined);
}
