/**
 * Dedup key strategies of the email-service receiver. Keys are namespaced `mail:` so one store can
 * serve both services' receivers.
 */

import { dedupKeyOf } from '../dedup/key-strategy.js';
import type { MailWebhookEvent } from './types.js';

/**
 * How the email-service receiver recognises copies of one event (email-service §6 rule 2: "deduplicate
 * by X-SvcMAIL-Id, or by message_id plus event"):
 * - `'delivery-id'` (default): `mail:delivery:<X-SvcMAIL-Id>`. Catches the sender's retries and API
 *   resends (same id), but `delivered` is emitted twice per message (server acceptance and final
 *   confirmation) under different ids, so it runs twice.
 * - `'message-event'`: `mail:message:<event>:<message_id>`. Also collapses the two `delivered` events of
 *   one message (and any other event of one message sent twice). Events without `message_id`
 *   (account events such as `ip_paused`) fall back to the delivery id; an unknown event (and a quarantined
 *   one, whose payload failed the schema) is keyed on its `message_id` when its payload has one.
 * - a function of the event returning a non-empty string, prefixed with `mail:`.
 *
 * Whatever the strategy, a key longer than 200 characters (`DEDUP_KEY_HASH_ABOVE`) is replaced by
 * `mail:sha256:<hex>` of the whole key, so a long `message_id` or id fits every store.
 *
 * @example
 * ```ts
 * createMailReceiver({ secret, dedupKey: 'message-event' });
 * createMailReceiver({ secret, dedupKey: (event) => `${event.name}:${event.deliveryId}` });
 * ```
 */
export type MailDedupKey = 'delivery-id' | 'message-event' | ((event: MailWebhookEvent) => string);

/**
 * The function computing a delivery's dedup key under `strategy`. Throws `options_invalid` for an
 * unknown strategy name.
 */
export function mailDedupKeyOf(strategy: MailDedupKey = 'delivery-id'): (event: MailWebhookEvent) => string {
  return dedupKeyOf('mail', strategy, {
    // The event name first: known names contain no ':', so keys cannot collide; an unknown name
    // holding one falls back to the delivery id.
    'message-event': (event) => {
      // An unknown event (or a quarantined one, read without the schema) is keyed the same way when
      // its signed payload has a message_id: a body replayed under fresh ids is one delivery.
      const messageId = (event.payload as { message_id?: unknown }).message_id;
      return typeof messageId === 'string' && messageId.length > 0 && !event.name.includes(':')
        ? `message:${event.name}:${messageId}`
        : undefined;
    },
  });
}
