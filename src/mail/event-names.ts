/**
 * Every event the email service sends, in the order of email-service §6 "Event names".
 *
 * @example
 * ```ts
 * import { MAIL_EVENT_NAMES } from '@svc/webhooks';
 *
 * await registerWebhook({ url, events: [...MAIL_EVENT_NAMES] });
 * ```
 */
export const MAIL_EVENT_NAMES = [
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'opened',
  'clicked',
  'unsubscribed',
  'blocked',
  'domain_verified',
  'ip_paused',
  'reputation_dropped',
  'billing_threshold_reached',
  'incident_escalated',
] as const;

/**
 * The name of an email-service event this version of the library knows.
 *
 * @example
 * ```ts
 * import type { MailEventName } from '@svc/webhooks';
 *
 * const alerts: MailEventName[] = ['ip_paused', 'reputation_dropped'];
 * ```
 */
export type MailEventName = (typeof MAIL_EVENT_NAMES)[number];

/**
 * The "sending events" of email-service §6's payload table: the events about the fate of one sent
 * message, which carry message_id, to and provider (see docs/events.md for this decision).
 */
export const MAIL_SENDING_EVENT_NAMES = [
  'delivered',
  'deferred',
  'bounced',
  'complained',
  'blocked',
] as const;

/**
 * A sending event's name, see {@link MAIL_SENDING_EVENT_NAMES}.
 */
export type MailSendingEventName = (typeof MAIL_SENDING_EVENT_NAMES)[number];

const known: ReadonlySet<string> = /* @__PURE__ */ new Set(MAIL_EVENT_NAMES);

/**
 * True when `name` is an email-service event this version knows; the services add events, so an
 * unknown name is normal and not an error.
 *
 * @example
 * ```ts
 * import { isMailEventName } from '@svc/webhooks';
 *
 * if (isMailEventName(name)) handlers[name]?.(payload);
 * ```
 */
export function isMailEventName(name: unknown): name is MailEventName {
  return typeof name === 'string' && known.has(name);
}
