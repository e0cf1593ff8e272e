import type { SchemaApi } from '../shared/schema-api.js';

/** The field groups of the email-service payloads (email-service §6), built with one zod API. */
export function payloadFields(z: SchemaApi) {
  // email-service §6 payload table: "ISO 8601 UTC with milliseconds". UTC (`Z`) is required; any
  // fractional precision is accepted, so a timestamp without milliseconds is not a lost event.
  const isoTimestamp = z.isoDatetime();

  // email-service §6: `to` is an email address. Only an "@" is required: zod's email pattern refuses
  // valid addresses (quoted local parts, IDNs), and a refused delivery is retried, then lost.
  const emailAddress = z.string().check(z.includes('@'));

  /** Fields about one message (sending events, opened, unsubscribed, clicked). */
  const messageFields = {
    message_id: z.string(),
    /** The recipient address. */
    to: emailAddress,
  };

  return {
    /** Fields in every payload (email-service §6: client_id "every payload"; event in the example). */
    base<N extends string>(name: N) {
      return {
        /** The event name; not always present in the body, the `X-SvcMAIL-Event` header is authoritative. */
        event: z.optional(z.literal(name)),
        /** The customer identifier. */
        client_id: z.string(),
      };
    },

    /** Fields of the sending events; from, response and latency_ms depend on the origin of the event. */
    sendingFields: {
      ...messageFields,
      /** The recipient's mailbox provider. */
      provider: z.string(),
      from: z.optional(z.string()),
      /** The recipient server's reply. */
      response: z.optional(z.string()),
      latency_ms: z.optional(z.number()),
      /** Present in the sending example of §6, not listed for every sending event: optional. */
      timestamp: z.optional(isoTimestamp),
    },

    /** Fields of opened, unsubscribed and clicked. */
    engagementFields: {
      ...messageFields,
      timestamp: isoTimestamp,
    },
  };
}
