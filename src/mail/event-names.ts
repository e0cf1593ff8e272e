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

// One paragraph per event for its page of the docs site (scripts/docs/events.mts): what the event
// tells a receiver, in our words after email-service §6. Internal: no entry imports it, so it is not
// in the package.
export const MAIL_EVENT_MEANINGS: Readonly<Record<(typeof MAIL_EVENT_NAMES)[number], string>> = {
  delivered:
    "The recipient's mail server accepted the message. The service sends it twice for one message: when the server accepts it and again at the final delivery confirmation, each time under its own delivery id, so a handler that must act once per message deduplicates by `message_id` and event (the `message-event` dedup key).",
  deferred:
    'Sending met a temporary failure (a full mailbox, a greylisting server, a rate limit at the destination) and the service will try again. It is not a bounce: do not suppress the address; a `delivered` or a `bounced` follows.',
  bounced:
    "The destination refused the message for good. The usual reaction is to stop sending to `to`, for example by adding it to your suppression list; `response` carries the server's reply when the service has it.",
  complained:
    "The recipient marked the message as spam, reported through the mailbox provider's feedback loop. Stop marketing mail to the address: complaints weigh on the sending reputation.",
  opened:
    'The tracking pixel of the message was loaded. Opens are a signal, not proof: privacy features of some mail clients load images on their own.',
  clicked: "The recipient followed a tracked link of the message; `url` is the link's target.",
  unsubscribed:
    'The recipient unsubscribed, through the unsubscribe link or the one-click header of the message. Honour it before the next send.',
  blocked:
    'The service stopped the message before it left, because the recipient is suppressed or blocked. The message met no mailbox provider, so `provider` may be absent.',
  domain_verified:
    'A sending domain of the account passed its DNS verification and can be used. The spec shows no field beyond `client_id`; `domain` is our reading and optional.',
  ip_paused:
    "The service paused one of the account's sending IP addresses because of its reputation. An operational alert; `ip` is our reading of the fields the spec does not show.",
  reputation_dropped:
    'The reputation of a sending IP dropped sharply. The payload carries bounce and complaint rates; their names are not shown in the spec, and `bounce_rate` and `complaint_rate` are ours (optional numbers).',
  billing_threshold_reached:
    'The monthly usage of the account crossed one of the alert thresholds of its plan. The spec shows no field beyond `client_id`; whatever else arrives is kept.',
  incident_escalated:
    'A deliverability incident of the account was escalated: an operational alert for whoever runs the sending. The spec shows no field beyond `client_id`.',
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
