/**
 * @module
 * The one error type of `@svc/webhooks`: a literal `code` and the HTTP `status` a receiver answers with.
 */

/**
 * Every error code the library produces, with the HTTP status a receiver answers with.
 * The table is the contract documented in `docs/errors.md`; codes are never renamed within a major.
 *
 * @example
 * ```ts
 * import { WEBHOOK_ERROR_STATUS } from '@svc/webhooks';
 *
 * const status: number = WEBHOOK_ERROR_STATUS.signature_mismatch; // 401
 * ```
 */
export const WEBHOOK_ERROR_STATUS = {
  // Signature (email-service §6 rule 1, crm-service §6 rule 2)
  signature_missing: 401,
  signature_header_repeated: 401,
  signature_malformed: 401,
  signature_mismatch: 401,
  // Configuration and programming errors: the receiver is misconfigured, the sender retries.
  secret_invalid: 500,
  body_not_raw: 500,
  raw_body_unavailable: 500,
  crypto_unavailable: 500,
  options_invalid: 500,
  // Request shape
  method_not_allowed: 405,
  not_found: 404,
  body_too_large: 413,
  body_unreadable: 400,
  body_timeout: 408,
  invalid_json: 400,
  invalid_payload: 400,
  event_missing: 400,
  event_mismatch: 400,
  // The app's `repair` of a payload that failed its schema threw or returned no object: the app's
  // bug, so the sender retries (with the database inbox: kept `quarantined`, docs/inbox.md).
  repair_failed: 500,
  delivery_id_missing: 400,
  delivery_id_mismatch: 400,
  delivery_id_invalid: 400,
  // Opt-in freshness of the signed timestamp (`maxEventAgeMs`)
  event_too_old: 400,
  event_in_future: 400,
  // Exactly-once handling
  delivery_in_progress: 409,
  store_unavailable: 503,
  // A `secret` function (a secret per tenant or route) threw, hung past `secretTimeoutMs` or
  // returned an unusable secret: the sender retries.
  secret_unavailable: 503,
  // A route bound to a tenant (CRM `routeTenant`) got a verified body naming another tenant: its
  // signer spoke for someone else. Final, so the sender's few retries end in a visible failure.
  tenant_mismatch: 403,
  handler_failed: 500,
  handler_timeout: 503,
  // Hand-off mode (docs/handoff.md): the queue engine did not confirm the write in time.
  handoff_unavailable: 503,
  // More deliveries in flight than the receiver's `maxInFlight`: answered at once, the body unread.
  overloaded: 503,
  // Reported to onError/the logger only (the sender already got its answer).
  lease_lost: 500,
  internal_error: 500,
  // Hand-off workers: a job that is not a job of this receiver (dead-lettered, never retried).
  job_invalid: 500,
  // Hand-off workers: no handler for the job's event here (dead-lettered, re-drivable after a deploy).
  no_handler: 500,
  // Reference emitter (@svc/webhooks/testing): the services' webhook-management API
  webhook_not_found: 404,
  delivery_not_found: 404,
  webhook_url_refused: 422,
  webhook_paused: 409,
  // Management clients (@svc/webhooks/manage): the services' management API answered with an error,
  // or could not be reached. `status` is the status the service answered with, when there was one.
  unauthorized: 401,
  insufficient_scope: 403,
  rate_limited: 429,
  conflict: 409,
  request_invalid: 400,
  api_unavailable: 503,
  request_timeout: 504,
  response_invalid: 502,
  // Recovery: the listing went past `maxPages` pages (or `maxPages` × 100 records) of one webhook.
  page_limit_exceeded: 502,
} as const;

/**
 * A literal error code; see {@link WEBHOOK_ERROR_STATUS} for the status each one maps to.
 *
 * @example
 * ```ts
 * import type { WebhookErrorCode } from '@svc/webhooks';
 *
 * const retryable: WebhookErrorCode[] = ['store_unavailable', 'handler_timeout'];
 * ```
 */
export type WebhookErrorCode = keyof typeof WEBHOOK_ERROR_STATUS;

/**
 * The codes for which the same delivery may succeed later: the sender (or a queue engine) should try
 * again. Every other code is final: the request itself is wrong and sending it again cannot help. The
 * pipeline decides refused or failed from this fact alone; HTTP statuses are the edge's
 * (`WEBHOOK_ERROR_STATUS`, read only by the HTTP answer).
 */
const RETRYABLE: ReadonlySet<WebhookErrorCode> = new Set<WebhookErrorCode>([
  // A misconfigured receiver: fixed by its operator, then the sender's retry succeeds.
  'secret_invalid',
  'body_not_raw',
  'raw_body_unavailable',
  'crypto_unavailable',
  'options_invalid',
  // Exactly-once handling and hand-off: the store, the handler or the queue engine may answer next time.
  'delivery_in_progress',
  'store_unavailable',
  'handler_failed',
  'handler_timeout',
  'repair_failed',
  'handoff_unavailable',
  // Shed past `maxInFlight`: the same delivery succeeds once the burst has passed.
  'overloaded',
  // A `secret` function that threw or hung: it may answer next time.
  'secret_unavailable',
  'lease_lost',
  'internal_error',
  // Management clients: the service may answer next time.
  'webhook_paused',
  'rate_limited',
  'conflict',
  'api_unavailable',
  'request_timeout',
  'response_invalid',
  'page_limit_exceeded',
]);

/** Whether a delivery that failed with `code` may succeed when tried again (see {@link RETRYABLE}). */
export function isRetryable(code: WebhookErrorCode): boolean {
  return RETRYABLE.has(code);
}

/**
 * Options of {@link WebhookError}.
 *
 * @example
 * ```ts
 * import type { WebhookErrorOptions } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: WebhookErrorOptions): WebhookErrorOptions {
 *   return value;
 * }
 * ```
 */
export interface WebhookErrorOptions {
  /** The underlying error (ES2022 `cause`); never sent to the webhook's sender. */
  cause?: unknown;
  /** Overrides the status of the code table; rarely needed. */
  status?: number;
  /** Management clients: the error code the service sent (`api_rate_limit_exceeded`, …), if any. */
  apiCode?: string;
  /** Management clients, `rate_limited`: epoch ms at which the service's rate-limit window resets. */
  resetAt?: number;
}

/**
 * The only error class the library throws or returns. `code` is a literal from
 * {@link WEBHOOK_ERROR_STATUS}; `status` is the HTTP status a receiver answers with. Messages name the
 * fix and never contain a secret or a handler's exception text.
 *
 * @example
 * ```ts
 * import { isWebhookError } from '@svc/webhooks';
 *
 * try {
 *   const event = await constructMailEvent(body, headers, process.env.SVC_MAIL_WEBHOOK_SECRET!);
 * } catch (error) {
 *   if (isWebhookError(error)) return new Response(null, { status: error.status });
 *   throw error;
 * }
 * ```
 */
export class WebhookError extends Error {
  // Fields are declared and set in the constructor, never initialised in the class body: the CJS
  // build goes through a second compiler (tsup's CJS code splitting, sucrase) that moves field
  // initialisers into a helper and wraps the class as `(_class = class …, _class)`, which names it
  // `_class` for util.inspect and loggers (test/package/error-name.test.ts). Declared fields also
  // give both builds the same own properties: no `apiCode: undefined` in one and not the other.
  declare readonly name: 'WebhookError';
  declare readonly code: WebhookErrorCode;
  declare readonly status: number;
  /** Management clients: the service's own error code, when its answer carried one. */
  declare readonly apiCode?: string;
  /** Management clients, `rate_limited`: epoch ms at which the rate-limit window resets. */
  declare readonly resetAt?: number;

  constructor(code: WebhookErrorCode, message: string, options: WebhookErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WebhookError';
    this.code = code;
    this.status = options.status ?? WEBHOOK_ERROR_STATUS[code];
    if (options.apiCode !== undefined) this.apiCode = options.apiCode;
    if (options.resetAt !== undefined) this.resetAt = options.resetAt;
  }

  /**
   * The JSON body a receiver sends back: `{ error: { code, message, doc_url } }`, `doc_url` the code's
   * entry on the documentation site's errors page.
   */
  toJSON(): { error: { code: WebhookErrorCode; message: string; doc_url: string } } {
    return { error: { code: this.code, message: this.message, doc_url: errorDocUrl(this.code) } };
  }
}

/** The documentation site's errors page (package.json `homepage` + `errors.html`). */
const ERRORS_PAGE = 'https://svc.github.io/webhooks/errors.html';

/** Where `code` is explained, with its fix: the `doc_url` of an error answer. */
export function errorDocUrl(code: string): string {
  return `${ERRORS_PAGE}#${code}`;
}

/**
 * True for a {@link WebhookError}, also one from another copy of the package (an app that loads both
 * the ESM and the CJS build holds two classes, so `instanceof` alone is not enough).
 *
 * @example
 * ```ts
 * if (isWebhookError(error) && error.code === 'signature_mismatch') console.warn('forged or misconfigured');
 * ```
 */
export function isWebhookError(value: unknown): value is WebhookError {
  if (value instanceof WebhookError) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; code?: unknown; status?: unknown };
  return (
    candidate.name === 'WebhookError' &&
    typeof candidate.code === 'string' &&
    Object.hasOwn(WEBHOOK_ERROR_STATUS, candidate.code) &&
    typeof candidate.status === 'number'
  );
}
