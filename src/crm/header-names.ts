import { WebhookError } from '../core/errors.js';

/**
 * The request headers of every CRM delivery (crm-service §6 "Request headers"), with
 * the document's literal names. "Svc" stands for the vendor's name: rename them with the
 * `headerNames` option when the vendor's headers read differently.
 *
 * @example
 * ```ts
 * import { CRM_HEADER_NAMES } from '@svc/webhooks';
 *
 * CRM_HEADER_NAMES.signature; // 'X-Svc-Signature'
 * ```
 */
export const CRM_HEADER_NAMES = {
  /** The event name; cross-checked against the body's `event` (the source, crm-service §6 rule 1). */
  event: 'X-Svc-Event',
  /** `sha256=` + hex HMAC-SHA256 of the raw body; the whole value is compared (§6 rule 2). */
  signature: 'X-Svc-Signature',
  /** The delivery id, equal to the body's `id` and identical across attempts. */
  deliveryId: 'X-Svc-Delivery',
} as const;

/**
 * The header names a CRM parser reads; any of them can be renamed (case does not matter).
 *
 * @example
 * ```ts
 * import type { CrmHeaderNames } from '@svc/webhooks';
 *
 * const names: Partial<CrmHeaderNames> = { signature: 'X-Acme-Signature' };
 * ```
 */
export interface CrmHeaderNames {
  event: string;
  signature: string;
  deliveryId: string;
}

// Resolved objects are remembered, so passing one back in (receiver -> parser) costs one lookup.
const resolved = new WeakSet<object>();
const DEFAULT_LOWER: Readonly<CrmHeaderNames> = remember(lower(CRM_HEADER_NAMES));

/**
 * The header names to read, lowercased once: the defaults with `overrides` applied. Receivers call it
 * once at construction and reuse the result.
 *
 * @example
 * ```ts
 * import { resolveCrmHeaderNames } from '@svc/webhooks';
 *
 * resolveCrmHeaderNames({ signature: 'X-Acme-Signature' });
 * // { event: 'x-svc-event', signature: 'x-acme-signature', deliveryId: 'x-svc-delivery' }
 * ```
 */
export function resolveCrmHeaderNames(overrides?: Partial<CrmHeaderNames>): Readonly<CrmHeaderNames> {
  if (overrides === undefined) return DEFAULT_LOWER;
  if (resolved.has(overrides)) return overrides as CrmHeaderNames;
  return remember(lower({ ...CRM_HEADER_NAMES, ...withoutUndefined(overrides) }));
}

function remember(names: CrmHeaderNames): Readonly<CrmHeaderNames> {
  const frozen = Object.freeze(names);
  resolved.add(frozen);
  return frozen;
}

function lower(names: CrmHeaderNames): CrmHeaderNames {
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
