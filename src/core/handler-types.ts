/**
 * The types users meet when registering handlers: the context every handler gets, and the shapes of
 * the handler, error and invalid-payload hooks.
 */
import type { WebhookError } from '../shared/errors.js';
import type { HandlerLog } from './logger.js';
import type { HeadersInput } from './receiver-types.js';
import type { SecretRequest } from './route-secrets.js';

/**
 * What a handler gets next to its event.
 *
 * The sender waits 10 seconds for an answer (email-service §6 rule 3, crm-service §6 rule 4). At
 * `deadline` (by default 9 s after the request arrived, option `timeoutMs`) `signal` aborts and the
 * receiver answers 503 `handler_timeout`; the claim is kept until the handler settles, then completed
 * (a retry is a 2xx duplicate) or released (a retry runs it again). Ack fast and queue slow work.
 *
 * @example
 * ```ts
 * receiver.on('bounced', async (event, { signal, timeLeftMs, dedupKey }) => {
 *   if (timeLeftMs() < 2_000) return queue.add('bounce', event.payload, { jobId: dedupKey });
 *   await fetch('https://crm.internal/suppress', { method: 'POST', body: event.payload.to, signal });
 * });
 * ```
 */
export interface HandlerContext {
  /** Aborts at the deadline, or when the sender disconnects. Pass it to fetch, database calls… */
  readonly signal: AbortSignal;
  /** When the receiver stops waiting for handlers, in epoch milliseconds (of the receiver's clock). */
  readonly deadline: number;
  /** Milliseconds left until {@link deadline}; 0 once passed. */
  timeLeftMs(): number;
  /** The delivery id (`X-SvcMAIL-Id` / `X-Svc-Delivery`), the same across the sender's retries. */
  readonly deliveryId: string;
  /**
   * The dedup key this run claimed, e.g. `mail:delivery:d_123`: the same for every copy and every
   * retry of the delivery, so use it as the idempotency key of the handler's own downstream calls.
   */
  readonly dedupKey: string;
  /** The receiver's logger with `service`, `deliveryId`, `event` and `dedupKey` added. */
  readonly log: HandlerLog;
  /** Hand-off mode only: the queue engine's attempt number of this job, from 1 (docs/handoff.md). */
  readonly attempt?: number;
  /**
   * Database inbox with a transaction adapter only (an inbox worker, or direct mode): the app's open
   * transaction (a `pg` client, a Drizzle or Kysely transaction, a SQLite database) in which the inbox
   * row's move to `handled` commits. Write through it and the handler's effects happen exactly once
   * (docs/inbox.md); read it typed with `worker.tx(context)` (or `direct.tx(context)` in direct mode),
   * which throws `options_invalid` for a context of no such transaction.
   */
  readonly tx?: unknown;
  /**
   * The route the delivery arrived on, as a `secret` function sees it: the URL's pathname and the
   * framework's route parameters (`{ path: '/webhooks/crm/acme', params: { tenant: 'acme' } }`; `{}`
   * where there are none, `/` when `receive(input)` was given no `path`). In direct mode, in database
   * inbox runs (the row stores it) and in queue workers (the job carries it under its MAC). With a
   * secret per tenant it names the tenant whose secret verified the delivery: a CRM receiver's
   * `routeTenant` refuses a body of another tenant before any handler runs (docs/receivers-tenants.md "Bind
   * a route to its tenant"). Absent only for a queue job written without one.
   *
   * @example
   * ```ts
   * import { createCrmReceiver } from '@svc/webhooks';
   *
   * const crm = createCrmReceiver({ secret, routeTenant: ({ params }) => params.tenant });
   * crm.on('deal.won', async (event, { route }) => {
   *   await deals.recordWin(route?.params.tenant, event.data.deal_id); // event.tenantId is the same
   * });
   * ```
   */
  readonly route?: SecretRequest;
}

/**
 * A handler of events of type `E`. A resolved promise means done (the delivery is completed and
 * acknowledged); a throw or rejection means failed (500, the claim is released, the retry runs it).
 *
 * @example
 * ```ts
 * const onBounce: WebhookHandler<MailEventOf<'bounced'>> = async (event) => {
 *   await suppress(event.payload.to);
 * };
 * ```
 */
export type WebhookHandler<E> = (event: E, context: HandlerContext) => unknown;

/**
 * Where in the pipeline an error reported to `onError` happened.
 *
 * @example
 * ```ts
 * receiver.onError((error, { phase }) => {
 *   if (phase === 'claim') metrics.increment('webhooks.store_down');
 * });
 * ```
 */
export type ErrorPhase =
  /** A handler threw or rejected. */
  | 'handler'
  /** A handler was still running at the deadline (it keeps its claim until it settles). */
  | 'timeout'
  /** `claim` failed or did not answer in time: the request was refused with 503. */
  | 'claim'
  /** `complete` failed after the handlers succeeded. */
  | 'complete'
  /** `release` failed after a handler failed. */
  | 'release'
  /** The claim's lease ended while the handlers ran (`lease_lost`): another attempt may run them too. */
  | 'lease'
  /** The dedup key function threw or returned something other than a non-empty string. */
  | 'dedup_key'
  /** A verified payload failed its schema and no `onInvalid` hook is registered. */
  | 'invalid'
  /** An `onInvalid` hook threw, or was still running at the deadline (`handler_timeout`). */
  | 'invalid_hook'
  /** Anything else (a bug): answered 500. */
  | 'internal'
  /** Hand-off mode: the queue engine refused or did not confirm the job in time (503). */
  | 'enqueue'
  /** Hand-off workers: a job was invalid, exhausted its attempts, or the worker failed around it. */
  | 'job';

/**
 * The phases whose error is always a {@link WebhookError} the receiver raised itself: a handler
 * deadline (`handler_timeout`) or a verified body that failed its schema (`invalid_payload`…).
 *
 * @example
 * ```ts
 * const ours = (phase: ErrorPhase): phase is WebhookErrorPhase => phase === 'timeout' || phase === 'invalid';
 * ```
 */
export type WebhookErrorPhase = 'timeout' | 'invalid';

/**
 * Facts about the failing delivery passed to an error hook, discriminated on `phase`. `error` is the
 * hook's first argument again, typed as precisely as is true: a `WebhookError` for the receiver's own
 * verdicts (`timeout`, `invalid`); `unknown` where user code or a store threw, since JavaScript can
 * throw anything (`throw 'oops'`, a rejected `undefined`). Narrow on `phase` to use it. The other
 * facts are there when the delivery got that far.
 *
 * @example
 * ```ts
 * receiver.onError((_error, info: ErrorInfo<MailWebhookEvent>) => {
 *   if (info.phase === 'timeout') metrics.increment('webhooks.timeout', { code: info.error.code });
 *   else if (info.error instanceof Error) console.error(info.phase, info.deliveryId, info.error.stack);
 * });
 * const where = ({ deliveryId, dedupKey }: ErrorInfo<MailWebhookEvent>) => `${deliveryId ?? '?'} (${dedupKey ?? 'no key'})`;
 * ```
 */
export type ErrorInfo<E> = {
  /** The parsed event, when parsing got that far. */
  event?: E;
  deliveryId?: string;
  /** The dedup key, when one was computed. */
  dedupKey?: string;
  /** The raw body, for phases `invalid`, `invalid_hook` and parser failures (`internal`). */
  body?: Uint8Array;
} & (
  | { phase: WebhookErrorPhase; error: WebhookError }
  | { phase: Exclude<ErrorPhase, WebhookErrorPhase>; error: unknown }
);

/**
 * Called with handler exceptions, store errors and other failures. Errors are delivered here and to
 * the logger, never to the sender. What it throws is logged and ignored; a promise it returns is not
 * awaited, so a slow hook never delays an answer. The first argument is `info.error`: narrow on
 * `info.phase` for a typed error.
 *
 * @example
 * ```ts
 * receiver.onError((error, { phase, deliveryId }) => Sentry.captureException(error, { extra: { phase, deliveryId } }));
 * ```
 */
export type ErrorHook<E> = (error: ErrorInfo<E>['error'], info: ErrorInfo<E>) => unknown;

/**
 * A verified delivery whose payload failed its schema, for {@link InvalidHook}.
 *
 * @example
 * ```ts
 * receiver.onInvalid(({ body, error }: InvalidDelivery) => console.warn(error.code, new TextDecoder().decode(body)));
 * ```
 */
export interface InvalidDelivery {
  /** The exact bytes received (the signature matched them). */
  body: Uint8Array;
  headers: HeadersInput;
  /** `invalid_json`, `invalid_payload`, `event_mismatch`, `delivery_id_mismatch`… with `cause`. */
  error: WebhookError;
  /** From the headers, when present. */
  deliveryId?: string;
  /** From the headers, when present. */
  event?: string;
  /** Which configured secret verified it. */
  secretIndex: number;
  /**
   * Aborts at the handler deadline (reason: a `WebhookError('handler_timeout')`), when the receiver
   * stops waiting for the hooks: pass it to the write that stores `body`.
   */
  signal: AbortSignal;
}

/**
 * Called (and awaited, within the deadline) for every verified delivery that fails to parse or
 * validate, before the receiver answers 400. Store `body` to replay it once the schema is fixed.
 * Runs once per attempt: the sender retries a 400 like any failure. A hook still running at the
 * handler deadline (`timeoutMs` from the request's arrival) is no longer awaited: its `signal` aborts,
 * the 400 goes out, the hook keeps running, and `onError` gets phase `invalid_hook` with a
 * `handler_timeout` error.
 *
 * @example
 * ```ts
 * receiver.onInvalid(async ({ body, error, deliveryId }) => {
 *   await db.insert('dead_letters', { deliveryId, code: error.code, body: Buffer.from(body) });
 * });
 * ```
 */
export type InvalidHook = (delivery: InvalidDelivery) => unknown;
