import type * as z from 'zod';
import type { KnownFields } from '../core/fields.js';
import type { MailEventName } from './event-names.js';
import type { mailPayloadSchemas } from './schemas.js';

/**
 * The validated payload of one email-service event, typed with exactly the fields this version
 * knows, so a misspelt field does not compile. Fields the service added later are still on the
 * object at runtime: read them with `rawFields(payload)` (typed `unknown`).
 *
 * @example
 * ```ts
 * import { type MailPayloadOf, rawFields } from '@svc/webhooks';
 *
 * function onBounce(payload: MailPayloadOf<'bounced'>) {
 *   console.log(payload.to, payload.response, rawFields(payload).added_later);
 * }
 * ```
 */
export type MailPayloadOf<N extends MailEventName> = KnownFields<z.output<(typeof mailPayloadSchemas)[N]>>;

/**
 * A verified, validated email-service event of a known name.
 *
 * @example
 * ```ts
 * import type { MailEventOf } from '@svc/webhooks';
 *
 * function onClick(event: MailEventOf<'clicked'>) {
 *   console.log(event.deliveryId, event.payload.url);
 * }
 * ```
 */
export interface MailEventOf<N extends MailEventName> {
  service: 'mail';
  known: true;
  /** The event name (from `X-SvcMAIL-Event`, or the body's `event` when the header is absent). */
  name: N;
  /** `X-SvcMAIL-Id`: identical across retries of one delivery; the dedup key. */
  deliveryId: string;
  payload: MailPayloadOf<N>;
  /** Which of the configured secrets matched (its index), to tell when an old secret can go. */
  secretIndex: number;
}

/**
 * Any known email-service event: a union discriminated on `name`.
 *
 * @example
 * ```ts
 * import type { MailEvent } from '@svc/webhooks';
 *
 * function handle(event: MailEvent) {
 *   if (event.name === 'clicked') return event.payload.url;
 * }
 * ```
 */
export type MailEvent = { [N in MailEventName]: MailEventOf<N> }[MailEventName];

/**
 * A verified email-service event whose name this version does not know (the service adds events):
 * its payload is the parsed JSON object, unvalidated.
 *
 * @example
 * ```ts
 * import type { UnknownMailEvent } from '@svc/webhooks';
 *
 * function log(event: UnknownMailEvent) {
 *   console.info('new mail event type', event.name);
 * }
 * ```
 */
export interface UnknownMailEvent {
  service: 'mail';
  known: false;
  name: string;
  deliveryId: string;
  payload: unknown;
  secretIndex: number;
}

/**
 * What the email-service parser returns: a known event, or an unknown one (`known: false`). Check
 * `known` first, then narrow on `name`.
 *
 * @example
 * ```ts
 * import type { MailWebhookEvent } from '@svc/webhooks';
 *
 * function handle(event: MailWebhookEvent) {
 *   if (!event.known) return;
 *   if (event.name === 'bounced') suppress(event.payload.to);
 * }
 * ```
 */
export type MailWebhookEvent = MailEvent | UnknownMailEvent;
