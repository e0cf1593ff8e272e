/**
 * The email-service receiver: verify, parse, validate, deduplicate and dispatch email-service webhooks.
 */
import { createReceiver, type WebhookReceiver } from '../core/create-receiver.js';
import { type BaseReceiverOptions, resolveOptions } from '../core/receiver-options.js';
import { type MailDedupKey, mailDedupKeyOf } from './dedup-key.js';
import { isMailEventName } from './event-names.js';
import { type MailHeaderNames, resolveMailHeaderNames } from './header-names.js';
import { parseMailEvent } from './parse-event.js';
import type { MailEvent, MailWebhookEvent, UnknownMailEvent } from './types.js';

/**
 * Default `ttlMs` of the email-service receiver: 90 days. A delivery can be resent by API with the
 * same `X-SvcMAIL-Id` for as long as its record is kept, 90 days (email-service §6 rule 5, §8), so a
 * completed delivery is remembered that long.
 *
 * @example
 * ```ts
 * import { MAIL_DEFAULT_TTL_MS } from '@svc/webhooks';
 *
 * MAIL_DEFAULT_TTL_MS / 86_400_000; // 90 (days)
 * ```
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
export interface MailReceiverOptions extends BaseReceiverOptions {
  /** Dedup key strategy; default `'delivery-id'`. See {@link MailDedupKey}. */
  dedupKey?: MailDedupKey;
  /** Renamed headers ("Svc" stands for the vendor's name); defaults `X-SvcMAIL-Sig`, `-Event`, `-Id`. */
  headerNames?: Partial<MailHeaderNames>;
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
  return createReceiver<MailEvent, UnknownMailEvent>(
    {
      service: 'mail',
      headerNames,
      parse: (body, headers, secretIndex) => parseMailEvent(body, headers, { secretIndex, headerNames }),
      dedupKey: dedupKey as (event: MailWebhookEvent) => string,
    },
    resolved,
    isMailEventName,
  );
}
