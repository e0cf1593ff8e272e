import type { ServerResponse } from 'node:http';
import type { Verdict } from '../../core/verdict.js';
import { failed } from '../../core/verdict.js';
import type { WebhookReceiverLike } from '../../receiver/create-receiver.js';
import { httpAnswer } from '../../receiver/http-answer.js';
import { lingerThenClose } from './linger.js';
import { NodeInput } from './node-input.js';
import { type NodeRequestLike, nodeBodyInput } from './raw-body.js';
import { writeAnswer } from './write-answer.js';

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
