import * as z from 'zod';
import { define } from '../shared/define.js';
import { base, engagementFields, sendingFields } from './payload-fields.js';

// One schema per event (email-service §6). looseObject keeps fields this version does not know.

/**
 * Payload of `delivered`: the recipient's server accepted the message. Sent twice for one message
 * (acceptance and final confirmation, email-service §6 rule 2).
 */
export const deliveredPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('delivered'), ...sendingFields }),
);

/**
 * Payload of `deferred`: a temporary failure the service retries; not a bounce.
 */
export const deferredPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('deferred'), ...sendingFields }),
);

/**
 * Payload of `bounced`: the destination refused the message.
 */
export const bouncedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('bounced'), ...sendingFields }),
);

/**
 * Payload of `complained`: the recipient marked the message as spam (provider feedback loop).
 */
export const complainedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('complained'), ...sendingFields }),
);

/**
 * Payload of `blocked`: sending stopped before the message left (recipient suppressed or blocked).
 * `provider` is optional here: a message that never left met no provider (docs/events.md).
 */
export const blockedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    ...base('blocked'),
    ...sendingFields,
    provider: z.string().optional(),
  }),
);

/**
 * Payload of `opened`: an open registered by the tracking pixel.
 */
export const openedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('opened'), ...engagementFields }),
);

/**
 * Payload of `clicked`: a click on a tracked link; carries the `url`.
 */
export const clickedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    ...base('clicked'),
    ...engagementFields,
    url: z.string(),
  }),
);

/**
 * Payload of `unsubscribed`: an unsubscribe by the link or by the List-Unsubscribe header.
 */
export const unsubscribedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('unsubscribed'), ...engagementFields }),
);
