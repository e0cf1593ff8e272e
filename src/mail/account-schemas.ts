import * as z from 'zod';
import { define } from '../shared/define.js';
import { base } from './payload-fields.js';

// email-service §6: the payload fields of these five events are "not shown" beyond client_id (and
// reputation_dropped's rates). Only client_id is required; everything else is kept as sent.

/**
 * Payload of `domain_verified`: a domain passed DNS verification. `domain` is a guess (not shown).
 */
export const domainVerifiedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    ...base('domain_verified'),
    domain: z.string().optional(),
  }),
);

/**
 * Payload of `ip_paused`: a sending IP was paused for reputation. `ip` is a guess (not shown).
 */
export const ipPausedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('ip_paused'), ip: z.string().optional() }),
);

/**
 * Payload of `reputation_dropped`: a sharp reputation drop of an IP, carrying bounce and complaint
 * rates. Their names are not shown in the spec: `bounce_rate` and `complaint_rate` are our choice,
 * optional numbers (docs/events.md).
 */
export const reputationDroppedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({
    ...base('reputation_dropped'),
    ip: z.string().optional(),
    bounce_rate: z.number().optional(),
    complaint_rate: z.number().optional(),
  }),
);

/**
 * Payload of `billing_threshold_reached`: monthly usage crossed an alert threshold of the plan.
 */
export const billingThresholdReachedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('billing_threshold_reached') }),
);

/**
 * Payload of `incident_escalated`: a deliverability incident was escalated (operational alert).
 */
export const incidentEscalatedPayloadSchema = /* @__PURE__ */ define(() =>
  z.looseObject({ ...base('incident_escalated') }),
);
