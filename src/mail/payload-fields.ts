import * as z from 'zod';
import { define } from '../shared/define.js';

// email-service §6 payload table: "ISO 8601 UTC with milliseconds". UTC (`Z`) is required; any
// fractional precision is accepted, so a timestamp without milliseconds is not a lost event.
export const isoTimestamp = /* @__PURE__ */ define(() => z.iso.datetime());

// email-service §6: `to` is an email address. Only an "@" is required: zod's email pattern refuses
// valid addresses (quoted local parts, IDNs), and a refused delivery is retried, then lost.
export const emailAddress = /* @__PURE__ */ define(() => z.string().includes('@'));

/** Fields in every payload (email-service §6: client_id "every payload"; event in the example). */
export function base<N extends string>(name: N) {
  return {
    /** The event name; not always present in the body, the `X-SvcMAIL-Event` header is authoritative. */
    event: z.literal(name).optional(),
    /** The customer identifier. */
    client_id: z.string(),
  };
}

/** Fields about one message (sending events, opened, unsubscribed, clicked). */
export const messageFields = /* @__PURE__ */ define(() => ({
  message_id: z.string(),
  /** The recipient address. */
  to: emailAddress,
}));

/** Fields of the sending events; from, response and latency_ms depend on the origin of the event. */
export const sendingFields = /* @__PURE__ */ define(() => ({
  ...messageFields,
  /** The recipient's mailbox provider. */
  provider: z.string(),
  from: z.string().optional(),
  /** The recipient server's reply. */
  response: z.string().optional(),
  latency_ms: z.number().optional(),
  /** Present in the sending example of §6, not listed for every sending event: optional. */
  timestamp: isoTimestamp.optional(),
}));

/** Fields of opened, unsubscribed and clicked. */
export const engagementFields = /* @__PURE__ */ define(() => ({
  ...messageFields,
  timestamp: isoTimestamp,
}));
