import type { ServerResponse } from 'node:http';

/**
 * A signal that aborts when the connection closes before `res` finished: the sender gave up (its own
 * 10 s timeout, email-service §6 rule 3, crm-service §6 rule 4) or went away, so the handlers it is
 * passed to (as `ReceiveInput.signal`) may stop their work. Aborts at once if that already happened.
 */
export function disconnectSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const abort = () => {
    if (!res.writableFinished) {
      controller.abort(new DOMException('The client disconnected before the answer was sent.', 'AbortError'));
    }
  };
  if (res.destroyed || res.socket?.destroyed) abort();
  else res.once('close', abort);
  return controller.signal;
}
