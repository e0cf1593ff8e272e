/**
 * @module
 * What happened to one delivery: the one result the pipeline returns, in direct mode, at enqueue and
 * in a hand-off worker. It knows no HTTP: the edge (`src/receiver/http-answer.ts`) maps it to a
 * status, `Retry-After` and a body; a hand-off worker maps it to acknowledge, retry or dead letter.
 */
import { isRetryable, WebhookError, type WebhookErrorCode } from '../shared/errors.js';

/**
 * What every verdict says about the delivery, as far as the request got.
 *
 * @example
 * ```ts
 * import type { Verdict, VerdictFacts } from '@svc/webhooks';
 *
 * const facts = (verdict: Verdict): VerdictFacts => verdict;
 * ```
 */
export interface VerdictFacts {
  /** The service of the receiver that judged it (`'mail'`, `'crm'`, …). */
  readonly service: string;
  /** The delivery id, once the request got far enough to read it. */
  readonly deliveryId?: string | undefined;
  /** The event name, once the request got far enough to read it. */
  readonly event?: string | undefined;
}

/**
 * The delivery needs nothing more from the sender: its handlers ran and completion was recorded
 * (`handled`), it had already been handled (`duplicate`), nothing is registered for its event
 * (`ignored`), or a queue engine confirmed the hand-off job (`queued`).
 *
 * @example
 * ```ts
 * import { jobAction, type AcceptedVerdict } from '@svc/webhooks/handoff';
 *
 * const action = jobAction(verdict, { attempt: 1 });
 * if (action.type === 'done') {
 *   const accepted: AcceptedVerdict = action.verdict;
 *   console.log(accepted.kind, accepted.deliveryId);
 * }
 * ```
 */
export interface AcceptedVerdict extends VerdictFacts {
  readonly kind: 'handled' | 'duplicate' | 'ignored' | 'queued';
  readonly deliveryId: string;
  readonly event: string;
}

/**
 * The delivery was refused before any handler ran, for a reason sending it again cannot fix (its
 * signature, size, shape or method; a hand-off job the receiver did not write). `error` says why.
 *
 * @example
 * ```ts
 * import type { RefusedVerdict, Verdict } from '@svc/webhooks';
 *
 * const refusal = (verdict: Verdict): RefusedVerdict | undefined =>
 *   verdict.kind === 'refused' ? verdict : undefined;
 * ```
 */
export interface RefusedVerdict extends VerdictFacts {
  readonly kind: 'refused';
  readonly code: WebhookErrorCode;
  readonly error: WebhookError;
}

/**
 * The delivery was not handled and should come again: a handler threw or ran out of time, the dedup
 * store or the queue engine failed, another attempt holds the claim, or the receiver is misconfigured.
 * `error` is the original error, unchanged (a handler's own `Error` with its stack for
 * `handler_failed`); `retryAfterMs`, when set, is when a retry can succeed at the earliest.
 *
 * @example
 * ```ts
 * import type { FailedVerdict, Verdict } from '@svc/webhooks';
 *
 * const retryIn = (verdict: Verdict): number | undefined =>
 *   verdict.kind === 'failed' ? (verdict as FailedVerdict).retryAfterMs : undefined;
 * ```
 */
export interface FailedVerdict extends VerdictFacts {
  readonly kind: 'failed';
  readonly code: WebhookErrorCode;
  readonly error: unknown;
  readonly retryAfterMs?: number | undefined;
}

/**
 * What happened to one delivery. `receiver.receive()` and `receiver.runJob()` resolve with it; the
 * adapters turn it into the HTTP answer (`toResponse`), the hand-off workers into acknowledge, retry
 * or dead letter.
 *
 * | kind | meaning | HTTP | hand-off worker |
 * | --- | --- | --- | --- |
 * | `handled` | handlers ran, completion recorded | 200 | done |
 * | `duplicate` | handled before; nothing ran | 200 | done |
 * | `ignored` | no handler for the event | 200 | done |
 * | `queued` | hand-off job stored | 200 | — |
 * | `refused` | not a valid delivery (`code`) | 4xx (status table) | dead letter |
 * | `failed` | not handled this time (`code`, original `error`) | 5xx / 409 + `Retry-After` | retry |
 *
 * @example
 * ```ts
 * import { createMailReceiver, type Verdict } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET! });
 * const verdict: Verdict = await receiver.receive({ body, headers });
 * if (verdict.kind === 'failed') console.error(verdict.code, verdict.error);
 * ```
 */
export type Verdict = AcceptedVerdict | RefusedVerdict | FailedVerdict;

/** An accepted verdict. */
export function accepted(
  kind: AcceptedVerdict['kind'],
  service: string,
  deliveryId: string,
  event: string,
): AcceptedVerdict {
  return { kind, service, deliveryId, event };
}

/** What a refusal or failure is about, when the request got far enough to know it. */
export interface Facts {
  deliveryId?: string | undefined;
  event?: string | undefined;
}

const NO_FACTS: Facts = Object.freeze({});

/** The generic messages of the errors the pipeline raises itself (never a handler's text). */
export const PIPELINE_MESSAGES: Partial<Record<WebhookErrorCode, string>> = {
  method_not_allowed: 'Webhook deliveries are POST requests.',
  delivery_in_progress: 'Another attempt of this delivery is being processed; retry later.',
  store_unavailable: 'The deduplication store is unavailable; retry later.',
  handler_failed: 'The webhook handler failed; the delivery will run again on retry.',
  handler_timeout: 'The webhook handler did not finish in time; retry later.',
  handoff_unavailable: 'The queue did not confirm the delivery; retry later.',
  overloaded: 'The receiver has too many deliveries in flight; retry later.',
  internal_error: 'The request failed; retry later.',
};

/** A {@link WebhookError} with the pipeline's own message for `code`, and `cause`. */
export function pipelineError(code: WebhookErrorCode, cause?: unknown): WebhookError {
  return new WebhookError(code, PIPELINE_MESSAGES[code] ?? code, cause === undefined ? {} : { cause });
}

/** A refusal: the request itself is wrong, sending it again cannot succeed. */
export function refused(service: string, error: WebhookError, facts: Facts = NO_FACTS): RefusedVerdict {
  return { kind: 'refused', service, code: error.code, error, ...facts };
}

/**
 * A failure with `code`; `error` is the original error (the handler's own, the store's), kept as is.
 * Without one, the pipeline's own {@link WebhookError} of the code stands in.
 */
export function failed(
  service: string,
  code: WebhookErrorCode,
  error: unknown,
  facts: Facts = NO_FACTS,
  retryAfterMs?: number,
): FailedVerdict {
  return {
    kind: 'failed',
    service,
    code,
    error: error === undefined ? pipelineError(code) : error,
    ...facts,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/**
 * The verdict of a {@link WebhookError} raised before any handler ran (a body reader's, the
 * parser's): a failure when the same request may succeed later (the code is retryable: a
 * misconfigured route, `raw_body_unavailable`, `secret_invalid`, …), a refusal otherwise.
 */
export function verdictOfError(service: string, error: WebhookError, facts: Facts = NO_FACTS): Verdict {
  return isRetryable(error.code) ? failed(service, error.code, error, facts) : refused(service, error, facts);
}
