import * as z from 'zod';
import { define } from '../shared/define.js';
import {
  billingThresholdReachedPayloadSchema,
  domainVerifiedPayloadSchema,
  incidentEscalatedPayloadSchema,
  ipPausedPayloadSchema,
  reputationDroppedPayloadSchema,
} from './account-schemas.js';
import type { MailEventName } from './event-names.js';
import {
  blockedPayloadSchema,
  bouncedPayloadSchema,
  clickedPayloadSchema,
  complainedPayloadSchema,
  deferredPayloadSchema,
  deliveredPayloadSchema,
  openedPayloadSchema,
  unsubscribedPayloadSchema,
} from './message-schemas.js';

/**
 * The payload schema of every known email-service event, by name: the parser's one lookup per
 * request (no union parse on the hot path).
 *
 * @example
 * ```ts
 * import { mailPayloadSchemas } from '@svc/webhooks/schemas';
 *
 * const result = mailPayloadSchemas.bounced.safeParse(payload);
 * ```
 */
export const mailPayloadSchemas = {
  delivered: deliveredPayloadSchema,
  deferred: deferredPayloadSchema,
  bounced: bouncedPayloadSchema,
  complained: complainedPayloadSchema,
  opened: openedPayloadSchema,
  clicked: clickedPayloadSchema,
  unsubscribed: unsubscribedPayloadSchema,
  blocked: blockedPayloadSchema,
  domain_verified: domainVerifiedPayloadSchema,
  ip_paused: ipPausedPayloadSchema,
  reputation_dropped: reputationDroppedPayloadSchema,
  billing_threshold_reached: billingThresholdReachedPayloadSchema,
  incident_escalated: incidentEscalatedPayloadSchema,
} as const satisfies { readonly [N in MailEventName]: z.ZodType };

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
