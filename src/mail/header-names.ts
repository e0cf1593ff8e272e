import { type HeaderNames, headerNameResolver } from '../core/header-names.js';

/**
 * The request headers of every email-service delivery (email-service §6 "Request headers"), with
 * the document's literal names. "Svc" stands for the vendor's name: rename them with the
 * `headerNames` option when the vendor's headers read differently.
 */
export const MAIL_HEADER_NAMES = {
  /** The event name. */
  event: 'X-SvcMAIL-Event',
  /** `sha256=` + hex HMAC-SHA256 of the raw body. */
  signature: 'X-SvcMAIL-Sig',
  /** The delivery id, identical across retries. */
  deliveryId: 'X-SvcMAIL-Id',
} as const;

/**
 * The header names an email-service parser reads; any of them can be renamed (case does not matter).
 *
 * @example
 * ```ts
 * import type { MailHeaderNames } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: MailHeaderNames): MailHeaderNames {
 *   return value;
 * }
 * ```
 */
export interface MailHeaderNames extends HeaderNames {}

/**
 * The header names to read, lowercased once: the defaults with `overrides` applied. Receivers call it
 * once at construction and reuse the result.
 */
export const resolveMailHeaderNames: (overrides?: Partial<MailHeaderNames>) => Readonly<MailHeaderNames> =
  /* @__PURE__ */ headerNameResolver(MAIL_HEADER_NAMES);
