import * as z from 'zod';
import { define } from '../shared/define.js';
import { base, engagementFields, sendingFields } from './payload-fields.js';

// One schema per event (email-service §6). looseObject keeps fields this version does not know.

/**
 * Payload of `delivered`: the recipient's server accepted the message. Sent twice for one message
 * (acceptance and final confirmation, email-service §6 rule 2).
 *
 * @example
 * ```ts
 * import { deliveredPayloadSchema } from '@svc/webhooks';
 *
 * deliveredPayloadSchema.parse(JSON.parse(text)).provider;
 * ```
 */
export const deliveredPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('delivered'), ...sendingFields }),
);

/**
 * Payload of `deferred`: a temporary failure the service retries; not a bounce.
 *
 * @example
 * ```ts
 * import { deferredPayloadSchema } from '@svc/webhooks';
 *
 * deferredPayloadSchema.safeParse(payload).success;
 * ```
 */
export const deferredPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('deferred'), ...sendingFields }),
);

/**
 * Payload of `bounced`: the destination refused the message.
 *
 * @example
 * ```ts
 * import { bouncedPayloadSchema } from '@svc/webhooks';
 *
 * const { to, response } = bouncedPayloadSchema.parse(payload);
 * ```
 */
export const bouncedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('bounced'), ...sendingFields }),
);

/**
 * Payload of `complained`: the recipient marked the message as spam (provider feedback loop).
 *
 * @example
 * ```ts
 * import { complainedPayloadSchema } from '@svc/webhooks';
 *
 * const { to, provider } = complainedPayloadSchema.parse(payload);
 * ```
 */
export const complainedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('complained'), ...sendingFields }),
);

/**
 * Payload of `blocked`: sending stopped before the message left (recipient suppressed or blocked).
 * `provider` is optional here: a message that never left met no provider (docs/events.md).
 *
 * @example
 * ```ts
 * import { blockedPayloadSchema } from '@svc/webhooks';
 *
 * const { message_id, to } = blockedPayloadSchema.parse(payload);
 * ```
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
 *
 * @example
 * ```ts
 * import { openedPayloadSchema } from '@svc/webhooks';
 *
 * const { message_id, timestamp } = openedPayloadSchema.parse(payload);
 * ```
 */
export const openedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('opened'), ...engagementFields }),
);

/**
 * Payload of `clicked`: a click on a tracked link; carries the `url`.
 *
 * @example
 * ```ts
 * import { clickedPayloadSchema } from '@svc/webhooks';
 *
 * const { url } = clickedPayloadSchema.parse(payload);
 * ```
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
 *
 * @example
 * ```ts
 * import { unsubscribedPayloadSchema } from '@svc/webhooks';
 *
 * const { to } = unsubscribedPayloadSchema.parse(payload);
 * ```
 */
export const unsubscribedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('unsubscribed'), ...engagementFields }),
);
