import * as z from 'zod';
import { define } from '../shared/define.js';
import { fullSchemaApi } from '../shared/schema-api.js';
import type { MailEventName } from './event-names.js';
import { buildMailPayloadSchemas } from './payload-schemas.js';

/**
 * The payload schema of every known email-service event, by name, on full zod. The receivers parse
 * with the same definitions built on `zod/mini` (same paths, codes and messages).
 *
 * @example
 * ```ts
 * import { mailPayloadSchemas } from '@svc/webhooks/schemas';
 *
 * const result = mailPayloadSchemas.bounced.safeParse(payload);
 * ```
 */
export const mailPayloadSchemas = /* @__PURE__ */ define(() => buildMailPayloadSchemas(fullSchemaApi));

function entry<N extends MailEventName>(name: N) {
  return z.object({ name: z.literal(name), payload: mailPayloadSchemas[name] });
}

/**
 * A known email-service event as `{ name, payload }`, discriminated on `name`: for validating stored
 * or queued events (the parser itself looks the schema up by name instead).
 *
 * @example
 * ```ts
 * import { mailEventSchema } from '@svc/webhooks/schemas';
 *
 * const event = mailEventSchema.parse({ name: 'opened', payload });
 * if (event.name === 'opened') event.payload.timestamp;
 * ```
 */
export const mailEventSchema = /* @__PURE__ */ define(() =>
  z.discriminatedUnion('name', [
    entry('delivered'),
    entry('deferred'),
    entry('bounced'),
    entry('complained'),
    entry('opened'),
    entry('clicked'),
    entry('unsubscribed'),
    entry('blocked'),
    entry('domain_verified'),
    entry('ip_paused'),
    entry('reputation_dropped'),
    entry('billing_threshold_reached'),
    entry('incident_escalated'),
  ]),
);
