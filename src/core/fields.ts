// Exact public types over zod's loose objects. The payload schemas use `z.looseObject` so a field the
// service adds later is kept, not stripped (email-service §6, crm-service §2 "fields may be added");
// zod types that output with `[k: string]: unknown`, which would let `payload.mesage_id` compile.
// The public types drop the index signature; the objects still carry every field at runtime, and
// `rawFields` is the typed way to read the ones this version does not know.

/**
 * `T` without its index signatures: exactly the fields this version knows (optionality kept).
 * Used by `MailPayloadOf`, `CrmDataOf`, `CrmEnvelopeOf` and `CrmAnyEnvelope`.
 *
 * @example
 * ```ts
 * import type { KnownFields } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: KnownFields<{ id: string }>): KnownFields<{ id: string }> {
 *   return value;
 * }
 * ```
 */
export type KnownFields<T> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};

/**
 * Every field of a validated payload, CRM `data` or envelope as the service sent it, typed
 * `unknown`: the way to read a field this version does not type yet (the services add fields, and
 * validation keeps them). It returns the same object, not a copy; read known fields from the typed
 * object itself, where a misspelt name does not compile.
 *
 * @example
 * ```ts
 * import { createMailReceiver, rawFields } from '@svc/webhooks';
 *
 * const receiver = createMailReceiver({ secret: process.env.MAIL_SECRET! });
 * receiver.on('bounced', (event) => {
 *   const category = rawFields(event.payload).bounce_category; // unknown: check before use
 *   if (typeof category === 'string') console.log(event.payload.message_id, category);
 * });
 * ```
 */
export function rawFields(value: object): Readonly<Record<string, unknown>> {
  return value as Readonly<Record<string, unknown>>;
}
