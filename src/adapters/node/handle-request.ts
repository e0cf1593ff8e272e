import type { ServerResponse } from 'node:http';
import { failure } from '../../core/outcomes.js';
import type { ReceiveOutcome, WebhookReceiverLike } from '../../core/receiver-types.js';
import { WebhookError } from '../../shared/errors.js';
import { disconnectSignal } from './disconnect-signal.js';
import { lingerThenClose } from './linger.js';
import { type NodeRequestLike, nodeBodyInput } from './raw-body.js';
import { writeOutcome } from './write-outcome.js';

/**
 * Runs one Node request through a receiver: the body (the bytes a parser kept, or a reader of the
 * stream the receiver calls with its own limits), headers, method and a disconnect signal in, the
 * outcome written to `res`. Never rejects: the receiver answers every refusal (`body_too_large` 413,
 * `body_timeout` 408, `body_unreadable` 400, `raw_body_unavailable` 500, with `fix` in its log only)
 * and an upload left unread is cut after the answer. The handlers' `signal` aborts if the client
 * disconnects before the answer. The Express adapter and the Next.js Pages Router adapter are this
 * function plus a framework `fix`.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { handleNodeRequest } from '@svc/webhooks/node';
 *
 * createServer((req, res) => void handleNodeRequest(mailReceiver, req, res));
 * ```
 */
export function handleNodeRequest(
  receiver: WebhookReceiverLike,
  req: NodeRequestLike,
  res: ServerResponse,
  fix = 'Give the webhook route the unparsed request.',
): Promise<void> {
  const send = (outcome: ReceiveOutcome) => {
    // An upload the receiver stopped reading (or never read): answer, then cut the connection
    // instead of reading it all.
    if (!req.readableEnded) lingerThenClose(req, res);
    writeOutcome(res, outcome);
  };
  // Our receivers never reject; one built elsewhere might (or throw), and must still get an answer.
  const failed = (error: unknown) => send(failure(internalError(error)));
  let outcome: Promise<ReceiveOutcome>;
  try {
    // No Request/Response objects on this path: Node headers go to the receiver as they are.
    outcome = receiver.receive({
      body: nodeBodyInput(req, fix),
      headers: req.headers,
      method: req.method,
      signal: disconnectSignal(res),
    });
  } catch (error) {
    failed(error);
    return Promise.resolve();
  }
  return outcome.then(send, failed);
}

function internalError(cause: unknown): WebhookError {
  return new WebhookError('internal_error', 'The request failed.', { cause });
}
