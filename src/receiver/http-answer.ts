/**
 * The HTTP edge: the one place that turns a {@link Verdict} into a status, headers and a body.
 * Adapters write what this gives; nothing below it knows HTTP. Bodies of the common cases are
 * precomputed; header objects are shared and frozen, so copy them before adding headers of your own.
 */

import { PIPELINE_MESSAGES, type Verdict } from '../core/verdict.js';
import { errorDocUrl, WEBHOOK_ERROR_STATUS, WebhookError, type WebhookErrorCode } from '../shared/errors.js';

/**
 * The HTTP answer to a delivery: never a 3xx (the services do not follow redirects) and never a 2xx
 * for a delivery that was not handled, queued, ignored or a duplicate.
 *
 * @example
 * ```ts
 * import { httpAnswer } from '@svc/webhooks';
 *
 * const { status, headers, body } = httpAnswer(await receiver.receive({ body: bytes, headers: req.headers }));
 * res.writeHead(status, headers).end(body);
 * ```
 */
export interface HttpAnswer {
  readonly status: number;
  /** Lowercase names: `content-type`, and `retry-after` (seconds) or `allow` where they apply. */
  readonly headers: Readonly<Record<string, string>>;
  /** Small JSON text: `{"ok":true,…}` or `{"error":{"code","message","doc_url"}}`. */
  readonly body: string;
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });
const ALLOW_HEADERS = Object.freeze({ 'content-type': 'application/json', allow: 'POST' });

// email-service §6 rule 3, crm-service §6 rule 4: any 2xx within 10 s is success. 200 with a tiny
// body rather than 204, so a sender's delivery history and curl both show what happened.
const ACCEPTED: Record<'handled' | 'duplicate' | 'ignored' | 'queued', HttpAnswer> = {
  handled: Object.freeze({ status: 200, headers: JSON_HEADERS, body: '{"ok":true}' }),
  duplicate: Object.freeze({ status: 200, headers: JSON_HEADERS, body: '{"ok":true,"result":"duplicate"}' }),
  ignored: Object.freeze({ status: 200, headers: JSON_HEADERS, body: '{"ok":true,"result":"ignored"}' }),
  queued: Object.freeze({ status: 200, headers: JSON_HEADERS, body: '{"ok":true,"result":"queued"}' }),
};

// Error bodies by code and message. The messages are the library's own (fixed strings or built from
// public request facts), so the set stays small; the cap guards against an unexpected variety.
const CACHE_LIMIT = 512;
const bodies = new Map<string, string>();

function bodyOf(code: WebhookErrorCode, message: string): string {
  const cacheKey = `${code}\u0000${message}`;
  let body = bodies.get(cacheKey);
  if (body === undefined) {
    body = JSON.stringify({ error: { code, message, doc_url: errorDocUrl(code) } });
    if (bodies.size < CACHE_LIMIT) bodies.set(cacheKey, body);
  }
  return body;
}

const retryHeaders = new Map<number, Readonly<Record<string, string>>>();

function headersWithRetry(seconds: number): Readonly<Record<string, string>> {
  let headers = retryHeaders.get(seconds);
  if (!headers) {
    headers = Object.freeze({ 'content-type': 'application/json', 'retry-after': String(seconds) });
    if (retryHeaders.size < 256) retryHeaders.set(seconds, headers);
  }
  return headers;
}

/**
 * The message a sender sees: the pipeline's own wording for the codes it raises (never a handler's or
 * a store's text), else the library's `WebhookError` message of that code.
 */
function messageOf(
  verdict: Exclude<Verdict, { kind: 'handled' | 'duplicate' | 'ignored' | 'queued' }>,
): string {
  const own = PIPELINE_MESSAGES[verdict.code];
  if (own !== undefined) return own;
  const { error } = verdict;
  return error instanceof WebhookError && error.code === verdict.code ? error.message : verdict.code;
}

/**
 * The HTTP answer to `verdict`: 200 for an accepted delivery; otherwise the status of its code
 * (`WEBHOOK_ERROR_STATUS`, never below 400), with `retry-after` in seconds on 409 and 503 (the
 * verdict's `retryAfterMs`, else 1 s) and `allow: POST` on 405.
 *
 * @example
 * ```ts
 * import { httpAnswer } from '@svc/webhooks';
 *
 * const answer = httpAnswer({ kind: 'refused', service: 'mail', code: 'signature_mismatch', error });
 * answer.status; // 401
 * ```
 */
export function httpAnswer(verdict: Verdict): HttpAnswer {
  if (verdict.kind !== 'refused' && verdict.kind !== 'failed') return ACCEPTED[verdict.kind];
  const { code } = verdict;
  let status: number = WEBHOOK_ERROR_STATUS[code] ?? 500;
  if (status < 400 || status > 599) status = 500;
  const body = bodyOf(code, messageOf(verdict));
  if (status === 405) return { status, headers: ALLOW_HEADERS, body };
  const retryAfterMs = verdict.kind === 'failed' ? verdict.retryAfterMs : undefined;
  const retry =
    retryAfterMs !== undefined
      ? Math.max(1, Math.ceil(retryAfterMs / 1000))
      : status === 409 || status === 503
        ? 1
        : 0;
  return { status, headers: retry === 0 ? JSON_HEADERS : headersWithRetry(retry), body };
}

/**
 * The verdict as a web `Response`.
 *
 * @example
 * ```ts
 * import { toResponse } from '@svc/webhooks';
 *
 * const response = toResponse(await receiver.receive({ body, headers: request.headers }));
 * ```
 */
export function toResponse(verdict: Verdict): Response {
  const { status, headers, body } = httpAnswer(verdict);
  return new Response(body, { status, headers });
}
