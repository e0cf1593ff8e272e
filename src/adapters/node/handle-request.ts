import type { ServerResponse } from 'node:http';
import type { ReceiveOutcome, WebhookReceiverLike } from '../../core/receiver-types.js';
import { isWebhookError, WebhookError } from '../../shared/errors.js';
import { disconnectSignal } from './disconnect-signal.js';
import { lingerThenClose } from './linger.js';
import { type NodeRequestLike, readRawBody } from './raw-body.js';
import { writeOutcome } from './write-outcome.js';

/**
 * Runs one Node request through a receiver: raw bytes (see {@link readRawBody}), `receive()`, and the
 * outcome written to `res`. Never rejects: a body it cannot read becomes the receiver's error outcome
 * (`body_too_large` 413, `body_timeout` 408, `body_unreadable` 400, `raw_body_unavailable` 500),
 * logged by the receiver. The handlers' `signal` aborts if the client disconnects before the answer.
 * The Express adapter and the Next.js Pages Router adapter are this function plus a framework `fix`.
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
  const refuse = (error: unknown) => {
    const outcome = receiver.reject(
      isWebhookError(error)
        ? error
        : new WebhookError('internal_error', 'The request failed.', { cause: error }),
    );
    // An upload we stopped reading: answer, then cut the connection instead of reading it all.
    if (!req.readableEnded) lingerThenClose(req, res);
    writeOutcome(res, outcome);
  };
  return readRawBody(req, receiver.maxBodyBytes, fix, receiver.bodyTimeoutMs).then((body) => {
    // No Request/Response objects on this path: Node headers go to the receiver as they are. Our
    // receivers never reject; one built elsewhere might (or throw), and must still get an answer.
    let outcome: Promise<ReceiveOutcome>;
    try {
      outcome = receiver.receive({
        body,
        headers: req.headers,
        method: req.method,
        signal: disconnectSignal(res),
      });
    } catch (error) {
      return refuse(error);
    }
    return outcome.then((settled) => writeOutcome(res, settled), refuse);
  }, refuse);
}
