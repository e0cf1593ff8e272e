/**
 * The email-service receiver: verify, parse, validate, deduplicate and dispatch email-service webhooks.
 */

import { checkMaxEventAge } from '../core/event-age.js';
import { withRepairs } from '../core/repair.js';
import { createReceiver, type WebhookReceiver } from '../receiver/create-receiver.js';
import { type ReceiverOptions, resolveOptions } from '../receiver/receiver-options.js';
import { WebhookError } from '../shared/errors.js';
import { type MailDedupKey, mailDedupKeyOf } from './dedup-key.js';
import { MAIL_EVENT_NAMES } from './event-names.js';
import { type MailHeaderNames, resolveMailHeaderNames } from './header-names.js';
import { mailEventParser, mailUnvalidatedReader } from './parse-event.js';
import { mailDrift } from './parse-schemas.js';
import { type MailRepairs, mailRepairSeam } from './repair.js';
import type { MailEvent, MailWebhookEvent, UnknownMailEvent } from './types.js';

/**
 * Default `ttlMs` of the email-service receiver: 90 days. A delivery can be resent by API with the
 * same `X-SvcMAIL-Id` for as long as its record is kept, 90 days (email-service §6 rule 5, §8), so a
 * completed delivery is remembered that long.
 */
export const MAIL_DEFAULT_TTL_MS = 90 * 86_400_000;

/**
 * Options of {@link createMailReceiver}.
 *
 * @example
 * ```ts
 * const options: MailReceiverOptions = {
 *   secret: [process.env.SVC_MAIL_WEBHOOK_SECRET!, process.env.SVC_MAIL_WEBHOOK_SECRET_OLD!],
 *   dedupKey: 'message-event',
 * };
 * ```
 */
export interface MailReceiverOptions extends ReceiverOptions {
  /** Dedup key strategy; default `'delivery-id'`. See {@link MailDedupKey}. */
  dedupKey?: MailDedupKey;
  /** Renamed headers ("Svc" stands for the vendor's name); defaults `X-SvcMAIL-Sig`, `-Event`, `-Id`. */
  headerNames?: Partial<MailHeaderNames>;
  /**
   * Refuse deliveries whose signed timestamp (email payload `timestamp`; events without one pass) is older than
   * this many ms (400 `event_too_old`) or more than 5 minutes ahead (400 `event_in_future`), timed by
   * `clock`. Bounds how long a captured body can be replayed. Default: no limit, because the spec
   * promises nothing about a delivery's age. See docs/security.md.
   */
  maxEventAgeMs?: number;
  /**
   * Refuse (400 `event_missing`) a body without its own `event` field; a body whose `event` differs
   * from `X-SvcMAIL-Event` is always refused (`event_mismatch`). With the database inbox as the target
   * both are kept `quarantined` instead and never run (docs/inbox-quarantine.md "What the inbox keeps"), keyed
   * apart from the delivery they copy. The service signs the body only, so
   * without this a captured body that lacks `event` can be re-sent under another event name. Default
   * `false`: the spec shows the field only in its sending-event example (email-service §6); turn it on
   * once your deliveries carry it. See docs/security.md.
   */
  requireBodyEvent?: boolean;
  /**
   * Per event, the app's correction of a payload that fails this version's schema, so a delivery the
   * service sent in a changed shape runs without a new release of this library: at receipt, and when a
   * `quarantined` inbox row is re-driven. See {@link MailRepairs} and docs/inbox.md "When the payload
   * changes". Default: none.
   */
  repair?: MailRepairs;
}

/**
 * A receiver of email-service webhooks; `on('bounced', …)` narrows the event to `MailEventOf<'bounced'>`.
 *
 * @example
 * ```ts
 * const receiver: MailReceiver = createMailReceiver({ secret });
 * receiver.on('clicked', (event) => console.log(event.payload.url));
 * ```
 */
export type MailReceiver = WebhookReceiver<MailEvent, UnknownMailEvent>;

/**
 * Creates the email-service receiver. Throws `secret_invalid` / `options_invalid` at once for a bad
 * configuration. Mount `receiver.handle` (web `Request` -> `Response`) or pass the receiver to an
 * adapter from `@svc/webhooks/node`, `/express`, `/fastify`, `/next`.
 *
 * @example
 * ```ts
 * import { createMailReceiver } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, dedupKey: 'message-event' })
 *   .on('bounced', async (event, { signal }) => {
 *     await fetch('https://crm.internal/suppress', { method: 'POST', body: event.payload.to, signal });
 *   })
 *   .onUnknown((event, { log }) => log.info('new email event type', { name: event.name }));
 *
 * export default { fetch: (request: Request) => receiver.handle(request) };
 * ```
 */
export function createMailReceiver(options: MailReceiverOptions): MailReceiver {
  const resolved = resolveOptions('createMailReceiver', options, MAIL_DEFAULT_TTL_MS);
  const headerNames = resolveMailHeaderNames(options.headerNames);
  const dedupKey = mailDedupKeyOf(options.dedupKey);
  const maxEventAgeMs = checkMaxEventAge('createMailReceiver', options.maxEventAgeMs);
  const { clock } = resolved;
  const requireBodyEvent = checkFlag(options.requireBodyEvent);
  const spec = withRepairs<MailWebhookEvent>(
    'createMailReceiver',
    {
      service: 'mail',
      headerNames,
      knownNames: MAIL_EVENT_NAMES,
      // crm-service §6: its signature header, named here so a CRM delivery at this route is recognised.
      foreignSignatures: [{ service: 'crm', header: 'x-svc-signature' }],
      parse: mailEventParser('createMailReceiver', { headerNames, requireBodyEvent, maxEventAgeMs, clock }),
      unvalidated: mailUnvalidatedReader('createMailReceiver', { headerNames, requireBodyEvent, clock }),
      dedupKey: dedupKey as (event: MailWebhookEvent) => string,
      drift: mailDrift,
      // email-service §6: the payload's `timestamp` (opened, unsubscribed, clicked; some sending events).
      timestamp: (event) => (event.payload as { timestamp?: unknown } | null)?.timestamp,
    },
    mailRepairSeam,
    options.repair,
  );
  return createReceiver<MailEvent, UnknownMailEvent>(spec, resolved);
}

function checkFlag(value: unknown): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true;
  throw new WebhookError(
    'options_invalid',
    `createMailReceiver: requireBodyEvent must be true or false (got ${typeof value}).`,
  );
}
