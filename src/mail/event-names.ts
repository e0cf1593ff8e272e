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

// One line per event for `svc-webhooks events` (email-service §6 "Event names", the "When" column).
// Internal: not re-exported by the package entries; unused imports of this module drop it from bundles.
export const MAIL_EVENT_DESCRIPTIONS: Readonly<Record<(typeof MAIL_EVENT_NAMES)[number], string>> = {
  delivered: "The recipient's server accepted the message (sent twice: accepted, then confirmed).",
  deferred: 'Temporary failure; the service will retry. Not a bounce.',
  bounced: 'The destination refused the message.',
  complained: 'The recipient marked it as spam (provider feedback loop).',
  opened: 'Open registered by the tracking pixel.',
  clicked: 'Click on a tracked link (payload carries url).',
  unsubscribed: 'Unsubscribe by the link or by the header of a click.',
  blocked: 'Sending stopped before leaving (recipient suppressed or blocked).',
  domain_verified: 'A domain passed DNS verification.',
  ip_paused: 'A sending IP was paused for reputation.',
  reputation_dropped: 'Sharp reputation drop of an IP; carries bounce and complaint rates.',
  billing_threshold_reached: 'Monthly usage crossed an alert threshold of the plan.',
  incident_escalated: 'A deliverability incident was escalated (operational alert).',
};

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
