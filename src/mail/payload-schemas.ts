import type * as z from 'zod';
import type { SchemaApi } from '../shared/schema-api.js';
import { accountPayloadSchemas } from './account-schemas.js';
import type { MailEventName } from './event-names.js';
import { messagePayloadSchemas } from './message-schemas.js';

// No runtime import of zod here: the receivers build these with `zod/mini` and must not load full zod.

/**
 * The payload schema of every email-service event, built with one zod API: full zod for `@svc/webhooks/schemas`
 * (src/mail/schemas.ts), `zod/mini` for the receivers' own parse (src/mail/parse-schemas.ts).
 */
export function buildMailPayloadSchemas(api: SchemaApi) {
  const message = messagePayloadSchemas(api);
  const account = accountPayloadSchemas(api);
  return {
    delivered: message.delivered,
    deferred: message.deferred,
    bounced: message.bounced,
    complained: message.complained,
    opened: message.opened,
    clicked: message.clicked,
    unsubscribed: message.unsubscribed,
    blocked: message.blocked,
    domain_verified: account.domain_verified,
    ip_paused: account.ip_paused,
    reputation_dropped: account.reputation_dropped,
    billing_threshold_reached: account.billing_threshold_reached,
    incident_escalated: account.incident_escalated,
  } as const satisfies { readonly [N in MailEventName]: z.ZodType };
}
