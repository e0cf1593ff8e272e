import { WebhookError } from '../core/errors.js';

/**
 * The request headers of every email-service delivery (email-service §6 "Request headers"), with
 * the document's literal names. "Svc" stands for the vendor's name: rename them with the
 * `headerNames` option when the vendor's headers read differently.
 *
 * @example
 * ```ts
 * import { MAIL_HEADER_NAMES } from '@svc/webhooks';
 *
 * MAIL_HEADER_NAMES.signature; // 'X-SvcMAIL-Sig'
 * ```
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
 * const names: Partial<MailHeaderNames> = { signature: 'X-AcmeMAIL-Sig' };
 * ```
 */
export interface MailHeaderNames {
  event: string;
  signature: string;
  deliveryId: string;
}

// Resolved objects are remembered, so passing one back in (receiver -> parser) costs one lookup.
const resolved = new WeakSet<object>();
const DEFAULT_LOWER: Readonly<MailHeaderNames> = remember(lower(MAIL_HEADER_NAMES));

/**
 * The header names to read, lowercased once: the defaults with `overrides` applied. Receivers call it
 * once at construction and reuse the result.
 *
 * @example
 * ```ts
 * import { resolveMailHeaderNames } from '@svc/webhooks';
 *
 * resolveMailHeaderNames({ signature: 'X-AcmeMAIL-Sig' });
 * // { event: 'x-svcmail-event', signature: 'x-acmemail-sig', deliveryId: 'x-svcmail-id' }
 * ```
 */
export function resolveMailHeaderNames(overrides?: Partial<MailHeaderNames>): Readonly<MailHeaderNames> {
  if (overrides === undefined) return DEFAULT_LOWER;
  if (resolved.has(overrides)) return overrides as MailHeaderNames;
  return remember(lower({ ...MAIL_HEADER_NAMES, ...withoutUndefined(overrides) }));
}

function remember(names: MailHeaderNames): Readonly<MailHeaderNames> {
  const frozen = Object.freeze(names);
  resolved.add(frozen);
  return frozen;
}

function lower(names: MailHeaderNames): MailHeaderNames {
  for (const [key, value] of Object.entries(names)) {
    if (typeof value !== 'string' || value.trim().length === 0) {
      throw new WebhookError('options_invalid', `headerNames.${key} must be a non-empty header name.`);
    }
  }
  return {
    event: names.event.toLowerCase(),
    signature: names.signature.toLowerCase(),
    deliveryId: names.deliveryId.toLowerCase(),
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
