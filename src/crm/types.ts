import type * as z from 'zod';
import type { KnownFields } from '../core/fields.js';
import type { crmAnyEnvelopeSchema } from './envelope.js';
import type { CrmEventName } from './event-names.js';
import type { crmDataSchemas, crmEnvelopeSchemas } from './schemas.js';

/**
 * The validated `data` of one CRM event, typed with exactly the fields this version knows, so a
 * misspelt field does not compile. Fields the service added later are still on the object at
 * runtime: read them with `rawFields(data)` (typed `unknown`).
 *
 * @example
 * ```ts
 * import { type CrmDataOf, rawFields } from '@svc/webhooks';
 *
 * function onWon(data: CrmDataOf<'deal.won'>) {
 *   console.log(data.title, data.value, rawFields(data).currency);
 * }
 * ```
 */
export type CrmDataOf<N extends CrmEventName> = KnownFields<z.output<(typeof crmDataSchemas)[N]>>;

/**
 * The envelope of one CRM event name `N`, with its known fields.
 *
 * @example
 * ```ts
 * import type { KnownEnvelope } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: KnownEnvelope<'contact.created'>): KnownEnvelope<'contact.created'> {
 *   return value;
 * }
 * ```
 */
export type KnownEnvelope<N extends CrmEventName> = KnownFields<z.output<(typeof crmEnvelopeSchemas)[N]>>;

/**
 * The whole validated envelope (crm-service §2) of one known CRM event: exactly the known envelope
 * fields, `data` as {@link CrmDataOf}. Extra envelope fields are on the object at runtime
 * (`rawFields(envelope)`).
 *
 * @example
 * ```ts
 * import type { CrmEnvelopeOf } from '@svc/webhooks';
 *
 * const tenantOf = (envelope: CrmEnvelopeOf<'deal.won'>) => envelope.tenant_id;
 * ```
 */
export type CrmEnvelopeOf<N extends CrmEventName> = {
  [K in keyof KnownEnvelope<N>]: K extends 'data' ? CrmDataOf<N> : KnownEnvelope<N>[K];
};

/**
 * The envelope of any CRM delivery, its `data` unvalidated; exactly the known envelope fields (extra
 * ones through `rawFields(envelope)`).
 *
 * @example
 * ```ts
 * import type { CrmAnyEnvelope } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: CrmAnyEnvelope): CrmAnyEnvelope {
 *   return value;
 * }
 * ```
 */
export type CrmAnyEnvelope = KnownFields<z.output<typeof crmAnyEnvelopeSchema>>;

/**
 * A verified, validated CRM event of a known name.
 *
 * @example
 * ```ts
 * import type { CrmEventOf } from '@svc/webhooks';
 *
 * function onEnrolled(event: CrmEventOf<'journey.enrolled'>) {
 *   console.log(event.tenantId, event.data.enrollment_id);
 * }
 * ```
 */
export interface CrmEventOf<N extends CrmEventName> {
  service: 'crm';
  known: true;
  /** The body's `event` (crm-service §6 rule 1). */
  name: N;
  /** The body's `id`, equal to `X-Svc-Delivery`: the same across attempts; the dedup key. */
  deliveryId: string;
  /** The envelope's `tenant_id`. */
  tenantId: string;
  /** The envelope's `timestamp`: ISO 8601 UTC. */
  timestamp: string;
  data: CrmDataOf<N>;
  /** The whole validated envelope; extra fields the service sent are kept (`rawFields(envelope)`). */
  envelope: CrmEnvelopeOf<N>;
  /** Which of the configured secrets matched (its index). */
  secretIndex: number;
}

/**
 * Any known CRM event: a union discriminated on `name`.
 *
 * @example
 * ```ts
 * import type { CrmEvent } from '@svc/webhooks';
 *
 * function handle(event: CrmEvent) {
 *   if (event.name === 'deal.won') return event.data.value;
 * }
 * ```
 */
export type CrmEvent = { [N in CrmEventName]: CrmEventOf<N> }[CrmEventName];

/**
 * A verified CRM event whose name this version does not know (the service adds events): the
 * envelope is validated, its `data` is passed on as parsed, unvalidated.
 *
 * @example
 * ```ts
 * import type { UnknownCrmEvent } from '@svc/webhooks';
 *
 * function log(event: UnknownCrmEvent) {
 *   console.info('new CRM event type', event.name, event.tenantId);
 * }
 * ```
 */
export interface UnknownCrmEvent {
  service: 'crm';
  known: false;
  name: string;
  deliveryId: string;
  tenantId: string;
  timestamp: string;
  data: unknown;
  envelope: CrmAnyEnvelope;
  secretIndex: number;
}

/**
 * What the CRM parser returns: a known event, or an unknown one (`known: false`). Check `known`
 * first, then narrow on `name`.
 *
 * @example
 * ```ts
 * import type { CrmWebhookEvent } from '@svc/webhooks';
 *
 * function handle(event: CrmWebhookEvent) {
 *   if (event.known && event.name === 'contact.created') welcome(event.data.email);
 * }
 * ```
 */
export type CrmWebhookEvent = CrmEvent | UnknownCrmEvent;
