/**
 * The email receiver's `repair` option (core/repair.ts): per event, the app's correction of a payload
 * that fails this version's schema, typed so it must return the event's input shape.
 */
import type * as z from 'zod';
import type { RepairSeam } from '../core/repair.js';
import type { MailEventName } from './event-names.js';
import type { mailPayloadSchemas } from './schemas.js';
import type { MailWebhookEvent } from './types.js';

/**
 * The `repair` option of `createMailReceiver`: for an event whose payload fails this version's schema
 * (a field the service renamed, a type it changed), a function of the payload as sent and the schema's
 * issues (paths and codes, never values) that returns the payload as the schema wants it, or
 * `undefined` to leave the delivery as it is (refused, or `quarantined` with the database inbox). The
 * correction is validated again and the handlers get the typed event; the event name and delivery id
 * stay those the service sent. Synchronous; what it throws is `repair_failed` (docs/inbox.md "When the
 * payload changes").
 *
 * @example
 * ```ts
 * import { createMailReceiver, type MailPayloadOf, type MailRepairs } from '@svc/webhooks';
 *
 * const repair: MailRepairs = {
 *   // The service renamed `provider` to `mta`: accept it until this library knows the new shape.
 *   // The rest is cast, not trusted: the schema checks the whole correction again.
 *   bounced: (payload) =>
 *     typeof payload.mta === 'string'
 *       ? { ...(payload as MailPayloadOf<'bounced'>), provider: payload.mta }
 *       : undefined,
 * };
 * const receiver = createMailReceiver({ secret: process.env.SVC_MAIL_WEBHOOK_SECRET!, repair });
 * ```
 */
export type MailRepairs = {
  [N in MailEventName]?: (
    payload: Record<string, unknown>,
    issues: readonly { readonly path: readonly (string | number)[]; readonly code: string }[],
  ) => z.input<(typeof mailPayloadSchemas)[N]> | undefined;
};

const encoder = new TextEncoder();

/** The payload is what a repair changes; the body's own `event` stays the signed one. */
export const mailRepairSeam: RepairSeam<MailWebhookEvent> = {
  raw: (read) => read.payload,
  body(read, corrected) {
    const sent = (read.payload as Record<string, unknown>).event;
    const payload: Record<string, unknown> = { ...corrected };
    if (sent === undefined) delete payload.event;
    else payload.event = sent;
    return encoder.encode(JSON.stringify(payload));
  },
};
