/**
 * Dedup key strategies of the CRM receiver. Keys are namespaced `crm:` so one store can serve both
 * services' receivers.
 */

import { dedupKeyOf } from '../dedup/key-strategy.js';
import type { CrmWebhookEvent } from './types.js';

/**
 * How the CRM receiver recognises copies of one delivery:
 * - `'delivery-id'` (default): `crm:delivery:<id>`, the envelope `id` that equals `X-Svc-Delivery`
 *   and is the same across every attempt (crm-service §6 rule 3).
 * - a function of the event returning a non-empty string, prefixed with `crm:` (for example to
 *   collapse several deliveries about one deal).
 *
 * A key longer than 200 characters (`DEDUP_KEY_HASH_ABOVE`) is replaced by `crm:sha256:<hex>` of the
 * whole key, so a long key from a function fits every store.
 *
 * @example
 * ```ts
 * createCrmReceiver({ secret, dedupKey: (event) => `${event.tenantId}:${event.deliveryId}` });
 * ```
 */
export type CrmDedupKey = 'delivery-id' | ((event: CrmWebhookEvent) => string);

/**
 * The function computing a delivery's dedup key under `strategy`. Throws `options_invalid` for an
 * unknown strategy name.
 */
export function crmDedupKeyOf(strategy: CrmDedupKey = 'delivery-id'): (event: CrmWebhookEvent) => string {
  return dedupKeyOf('crm', strategy);
}
