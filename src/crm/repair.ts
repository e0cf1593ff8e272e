/**
 * The CRM receiver's `repair` option (core/repair.ts): per event, the app's correction of an event's
 * `data` that fails this version's schema, typed so it must return the event's input shape.
 */
import type * as z from 'zod';
import type { RepairSeam } from '../core/repair.js';
import type { CrmEventName } from './event-names.js';
import type { crmDataSchemas } from './schemas.js';
import type { CrmWebhookEvent } from './types.js';

/**
 * The `repair` option of `createCrmReceiver`: for an event whose envelope fails this version's schema,
 * a function of its `data` as sent (called only when `data` is an object) and the schema's issues
 * (envelope paths such as `data.value`, and codes; never values) that returns the `data` as the schema
 * wants it, or `undefined` to leave the delivery as it is. The rest of the envelope (`id`, `event`,
 * `tenant_id`, `timestamp`) stays as the service signed it. Synchronous; what it throws is
 * `repair_failed` (docs/inbox.md "When the payload changes").
 *
 * @example
 * ```ts
 * import { createCrmReceiver, type CrmDataOf, type CrmRepairs } from '@svc/webhooks';
 *
 * const repair: CrmRepairs = {
 *   // `value` arrived as a string of digits: accept it as the number the schema wants.
 *   'deal.won': (data) =>
 *     typeof data.value === 'string'
 *       ? { ...(data as CrmDataOf<'deal.won'>), value: Number(data.value) }
 *       : undefined,
 * };
 * const receiver = createCrmReceiver({ secret: process.env.SVC_CRM_WEBHOOK_SECRET!, repair });
 * ```
 */
export type CrmRepairs = {
  [N in CrmEventName]?: (
    data: Record<string, unknown>,
    issues: readonly { readonly path: readonly (string | number)[]; readonly code: string }[],
  ) => z.input<(typeof crmDataSchemas)[N]> | undefined;
};

const encoder = new TextEncoder();

/** `data` is what a repair changes; the envelope around it stays the signed one. */
export const crmRepairSeam: RepairSeam<CrmWebhookEvent> = {
  raw: (read) => (read.known ? read.envelope.data : (read.envelope as Record<string, unknown>).data),
  body: (read, corrected) => encoder.encode(JSON.stringify({ ...read.envelope, data: corrected })),
};
