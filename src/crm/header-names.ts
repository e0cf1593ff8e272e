import { type HeaderNames, headerNameResolver } from '../core/header-names.js';

/**
 * The request headers of every CRM delivery (crm-service §6 "Request headers"), with
 * the document's literal names. "Svc" stands for the vendor's name: rename them with the
 * `headerNames` option when the vendor's headers read differently.
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
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: CrmHeaderNames): CrmHeaderNames {
 *   return value;
 * }
 * ```
 */
export interface CrmHeaderNames extends HeaderNames {}

/**
 * The header names to read, lowercased once: the defaults with `overrides` applied. Receivers call it
 * once at construction and reuse the result.
 */
export const resolveCrmHeaderNames: (overrides?: Partial<CrmHeaderNames>) => Readonly<CrmHeaderNames> =
  /* @__PURE__ */ headerNameResolver(CRM_HEADER_NAMES);
