/**
 * The errors of a body read with a size cap and a deadline, in one wording wherever the size or the
 * time is checked (the receiver, the fetch and Node readers, the Fastify parser, the Lambda adapter),
 * and the default deadline. They sit beside `WebhookError` so that an adapter's reader needs nothing
 * from the pipeline.
 */
import { WebhookError } from './errors.js';

/**
 * Default `bodyTimeoutMs`, in ms. A delivery of a few KB arrives in milliseconds; a client still
 * sending after 5 s is stalled or hostile (slow-loris), and the senders give up at 10 s anyway
 * (email-service §6 rule 3, crm-service §6 rule 4), so holding the connection longer serves no one.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

/** The `body_too_large` error of a receiver or adapter whose limit is `maxBodyBytes`. */
export function bodyTooLarge(maxBodyBytes: number, cause?: unknown): WebhookError {
  return new WebhookError(
    'body_too_large',
    `The body exceeds this receiver's limit of ${maxBodyBytes} bytes (option maxBodyBytes).`,
    cause === undefined ? {} : { cause },
  );
}

/** The `body_timeout` error of a receiver whose body deadline is `bodyTimeoutMs`. */
export function bodyTimeout(bodyTimeoutMs: number): WebhookError {
  return new WebhookError(
    'body_timeout',
    `The body did not arrive within ${bodyTimeoutMs} ms (option bodyTimeoutMs).`,
  );
}
