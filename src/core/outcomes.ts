/**
 * The status policy in one place: which outcome (status, headers, small JSON body) each result and
 * error code produces. Bodies of the common cases are precomputed; header objects are shared and
 * frozen, so adapters must copy them before adding headers of their own.
 */
import { WEBHOOK_ERROR_STATUS, WebhookError, type WebhookErrorCode } from '../shared/errors.js';
import type { ReceiveOutcome, ReceiveResult } from './receiver-types.js';

const JSON_HEADERS: Record<string, string> = Object.freeze({ 'content-type': 'application/json' });

// email-service §6 rule 3, crm-service §6 rule 4: any 2xx within 10 s is success. 200 with a tiny
// body rather than 204, so a sender's delivery history and curl both show what happened.
const ACK_BODY = {
  processed: '{"ok":true}',
  ignored: '{"ok":true,"result":"ignored"}',
  duplicate: '{"ok":true,"result":"duplicate"}',
  queued: '{"ok":true,"result":"queued"}',
} as const;

/** The 2xx outcome of a processed, ignored or duplicate delivery. */
export function acknowledged(
  result: 'processed' | 'ignored' | 'duplicate' | 'queued',
  deliveryId: string | undefined,
  event: string | undefined,
): ReceiveOutcome {
  return { status: 200, headers: JSON_HEADERS, body: ACK_BODY[result], result, deliveryId, event };
}

/** The generic messages of the errors the pipeline raises itself (never a handler's text). */
export const DEFAULT_MESSAGES: Partial<Record<WebhookErrorCode, string>> = {
  method_not_allowed: 'Webhook deliveries are POST requests.',
  delivery_in_progress: 'Another attempt of this delivery is being processed; retry later.',
  store_unavailable: 'The deduplication store is unavailable; retry later.',
  handler_failed: 'The webhook handler failed; the delivery will run again on retry.',
  handler_timeout: 'The webhook handler did not finish in time; retry later.',
  internal_error: 'Unexpected receiver error; retry later.',
};

/** A {@link WebhookError} with the default message of its code. */
export function pipelineError(code: WebhookErrorCode, cause?: unknown): WebhookError {
  return new WebhookError(code, DEFAULT_MESSAGES[code] ?? code, cause === undefined ? {} : { cause });
}

function resultOf(status: number, code: WebhookErrorCode): ReceiveResult {
  if (code === 'delivery_in_progress') return 'in_progress';
  if (code === 'store_unavailable') return 'unavailable';
  if (code === 'handler_failed' || code === 'handler_timeout') return 'failed';
  return status >= 500 ? 'failed' : 'rejected';
}

// Error bodies by code and message. The messages are the library's own (fixed strings or built from
// public request facts), so the set stays small; the cap guards against an unexpected variety.
const BODY_CACHE_LIMIT = 512;
const bodies = new Map<string, string>();

function bodyOf(code: WebhookErrorCode, message: string): string {
  const cacheKey = `${code}\u0000${message}`;
  let body = bodies.get(cacheKey);
  if (body === undefined) {
    body = JSON.stringify({ error: { code, message } });
    if (bodies.size < BODY_CACHE_LIMIT) bodies.set(cacheKey, body);
  }
  return body;
}

const retryHeaders = new Map<number, Record<string, string>>();

function headersWithRetry(seconds: number): Record<string, string> {
  let headers = retryHeaders.get(seconds);
  if (!headers) {
    headers = Object.freeze({ 'content-type': 'application/json', 'retry-after': String(seconds) });
    if (retryHeaders.size < 256) retryHeaders.set(seconds, headers);
  }
  return headers;
}

/** What a refusal or failure is about, when the request got far enough to know it. */
export interface OutcomeFacts {
  deliveryId?: string | undefined;
  event?: string | undefined;
  /** Overrides the default `retry-after` (1 s on 409 and 503). */
  retryAfterSeconds?: number | undefined;
}

/** Why a request was refused or failed: an error, a code with its message, or one of the receiver's own codes. */
export type FailureReason = WebhookError | { code: WebhookErrorCode; message: string } | WebhookErrorCode;

const NO_FACTS: OutcomeFacts = Object.freeze({});

/**
 * The one builder of a refused or failed request's outcome. A {@link WebhookError} brings its code,
 * message and status; a bare code gets the receiver's default message for it (never a handler's
 * text). Statuses come from `WEBHOOK_ERROR_STATUS`; a 3xx or 2xx is never produced (either would
 * make the sender drop the delivery). Retry-inviting statuses (409, 503) carry `retry-after` in
 * seconds.
 */
export function failure(reason: FailureReason, facts: OutcomeFacts = NO_FACTS): ReceiveOutcome {
  let code: WebhookErrorCode;
  let message: string;
  let status: number;
  if (typeof reason === 'string') {
    code = reason;
    message = DEFAULT_MESSAGES[reason] ?? reason;
    status = WEBHOOK_ERROR_STATUS[reason];
  } else {
    code = reason.code;
    message = reason.message;
    status = reason instanceof WebhookError ? reason.status : WEBHOOK_ERROR_STATUS[code];
  }
  if (status < 400 || status > 599) status = 500;
  const retry = facts.retryAfterSeconds ?? (status === 409 || status === 503 ? 1 : undefined);
  return {
    status,
    headers: retry === undefined ? JSON_HEADERS : headersWithRetry(retry),
    body: bodyOf(code, message),
    result: resultOf(status, code),
    code,
    deliveryId: facts.deliveryId,
    event: facts.event,
  };
}

const ALLOW_HEADERS: Record<string, string> = Object.freeze({
  'content-type': 'application/json',
  allow: 'POST',
});

/** The 405 outcome, with `allow: POST`. */
export function methodNotAllowed(): ReceiveOutcome {
  return { ...failure('method_not_allowed'), headers: ALLOW_HEADERS };
}

/**
 * The outcome as a web `Response`.
 *
 * @example
 * ```ts
 * const response = toResponse(await receiver.receive({ body, headers }));
 * ```
 */
export function toResponse(outcome: ReceiveOutcome): Response {
  return new Response(outcome.body, { status: outcome.status, headers: outcome.headers });
}
