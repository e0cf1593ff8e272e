/**
 * The `raw_body_unavailable` refusal of a request whose body something else read first: the
 * signature is over the exact bytes (email-service §6 rule 1, crm-service §6 rule 2), and a parsed
 * or decoded body cannot prove it still has them.
 */
import { WebhookError } from '../shared/errors.js';

/**
 * The error a body reader rejects with when the body was read before the receiver and no exact copy
 * of its bytes was kept. `fix` names the setting to change for the framework at hand; it goes to the
 * receiver's log through `cause`, never to the sender (who only gets the short message).
 */
export function rawBodyUnavailable(fix: string): WebhookError {
  return new WebhookError(
    'raw_body_unavailable',
    'The receiver could not read the raw request body; its log names the configuration to fix.',
    {
      cause: new Error(
        `The request body was read before the webhook route and no exact copy of its bytes was kept, so the signature cannot be checked. ${fix}`,
      ),
    },
  );
}

/**
 * Whether a web `Request`'s body was read or is being read by someone else (`request.json()`,
 * `request.text()`, a reader holding the stream): reading it again would throw.
 */
export function bodyTaken(request: Request): boolean {
  return request.bodyUsed || request.body?.locked === true;
}

/** Distinct fixes remembered per receiver; the adapters have a handful, so this is never reached. */
const MAX_REMEMBERED = 32;

/**
 * A receiver's memory of the `raw_body_unavailable` refusals it has logged: `true` the first time a
 * fix is seen (that entry goes out at `error` with the fix), `false` after, so a misconfigured route
 * writes its fix once, not once per delivery (later ones go out at `debug`). Bounded: a reader that
 * builds a new cause per request cannot grow it past {@link MAX_REMEMBERED}.
 */
export function rawBodyReports(): (error: unknown) => boolean {
  const seen = new Set<string>();
  return (error) => {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
    if (seen.has(cause)) return false;
    if (seen.size < MAX_REMEMBERED) seen.add(cause);
    return true;
  };
}
