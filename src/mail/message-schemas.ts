import type { SchemaApi } from '../shared/schema-api.js';
import { payloadFields } from './payload-fields.js';

// One schema per event (email-service §6). looseObject keeps fields this version does not know.

/** The payload schemas of the message events, built with one zod API. */
export function messagePayloadSchemas(z: SchemaApi) {
  const { base, engagementFields, sendingFields } = payloadFields(z);
  return {
    /**
     * Payload of `delivered`: the recipient's server accepted the message. Sent twice for one message
     * (acceptance and final confirmation, email-service §6 rule 2).
     */
    delivered: z.looseObject({ ...base('delivered'), ...sendingFields }),
    /** Payload of `deferred`: a temporary failure the service retries; not a bounce. */
    deferred: z.looseObject({ ...base('deferred'), ...sendingFields }),
    /** Payload of `bounced`: the destination refused the message. */
    bounced: z.looseObject({ ...base('bounced'), ...sendingFields }),
    /** Payload of `complained`: the recipient marked the message as spam (provider feedback loop). */
    complained: z.looseObject({ ...base('complained'), ...sendingFields }),
    /** Payload of `opened`: an open registered by the tracking pixel. */
    opened: z.looseObject({ ...base('opened'), ...engagementFields }),
    /** Payload of `clicked`: a click on a tracked link; carries the `url`. */
    clicked: z.looseObject({ ...base('clicked'), ...engagementFields, url: z.string() }),
    /** Payload of `unsubscribed`: an unsubscribe by the link or by the List-Unsubscribe header. */
    unsubscribed: z.looseObject({ ...base('unsubscribed'), ...engagementFields }),
    /**
     * Payload of `blocked`: sending stopped before the message left (recipient suppressed or blocked).
     * `provider` is optional here: a message that never left met no provider (docs/events.md).
     */
    blocked: z.looseObject({ ...base('blocked'), ...sendingFields, provider: z.optional(z.string()) }),
  };
}
