import type { ServerResponse } from 'node:http';
import type { ReceiveOutcome } from '../../core/receiver-types.js';

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
  const { body } = outcome;
  res.writeHead(outcome.status, {
    ...outcome.headers,
    'content-length': body === null ? 0 : Buffer.byteLength(body),
  });
  res.end(body ?? undefined);
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
