/**
 * What a delivery id may look like before it becomes a dedup key. An unsigned header sets it (the
 * email service signs only the body, email-service §6), so it is bounded here, once, for every store.
 */

/**
 * Longest delivery id accepted, in characters. The email service's `X-SvcMAIL-Id` is opaque (its
 * form is not shown, email-service §6), so the bound is generous; the CRM id is a 36-character UUID
 * (crm-service §2). A longer id is refused with `delivery_id_invalid` (400).
 */
export const MAX_DELIVERY_ID_LENGTH = 256;

// Visible ASCII (0x21-0x7E): what HTTP header tokens and every id scheme we know use. No spaces, so a
// repeated header joined as "a, b" is refused rather than taken for one id.
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * True when `id` is 1 to {@link MAX_DELIVERY_ID_LENGTH} visible ASCII characters (`!` to `~`).
 */
export function isValidDeliveryId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_DELIVERY_ID_LENGTH && VISIBLE_ASCII.test(id);
}
