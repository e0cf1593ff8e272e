import { WebhookError } from '../core/errors.js';
import { readHeaderString } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { type RawBody, toBytes } from '../verify/bytes.js';
import type { MailEventName } from './event-names.js';
import { type MailHeaderNames, resolveMailHeaderNames } from './header-names.js';
import { invalidPayload, parseJsonObject } from './parse-helpers.js';
import { mailPayloadSchemas } from './schemas.js';
import type { MailEvent, MailWebhookEvent } from './types.js';

/**
 * Options of {@link parseMailEvent}.
 *
 * @example
 * ```ts
 * const options: ParseMailEventOptions = { secretIndex: 0, headerNames: { event: 'X-AcmeMAIL-Event' } };
 * ```
 */
export interface ParseMailEventOptions {
  /** Which secret verified the signature (from `verifySignature`), carried into the event. */
  secretIndex: number;
  /** Renamed headers ("Svc" stands for the vendor's name); defaults are {@link MAIL_HEADER_NAMES}. */
  headerNames?: Partial<MailHeaderNames>;
}

const schemas: ReadonlyMap<string, (typeof mailPayloadSchemas)[MailEventName]> = new Map(
  Object.entries(mailPayloadSchemas),
);

/**
 * The parse step after the signature was verified: JSON, event name, delivery id, schema. Throws a
 * `WebhookError` (invalid_json, event_missing, event_mismatch, delivery_id_missing,
 * invalid_payload); an event name this version does not know gives `known: false`, never an error.
 * Only call it with a body whose signature you verified; {@link constructMailEvent} does both.
 *
 * @example
 * ```ts
 * import { parseMailEvent, verifySignature } from '@svc/webhooks';
 *
 * const verified = await verifySignature(body, request.headers.get('X-SvcMAIL-Sig'), secret);
 * if (verified.ok) {
 *   const event = parseMailEvent(body, request.headers, { secretIndex: verified.secretIndex });
 * }
 * ```
 */
export function parseMailEvent(
  body: RawBody,
  headers: HeadersInput,
  options: ParseMailEventOptions,
): MailWebhookEvent {
  const names = resolveMailHeaderNames(options.headerNames);
  const payload = parseJsonObject(toBytes(body), 'email service');

  // email-service §6: the body's `event` is "always in the sending-event example" only, so the
  // header is the source; the body's value, when present, must agree.
  const headerName = readHeaderString(headers, names.event);
  const bodyName = payload.event;
  if (bodyName !== undefined && typeof bodyName !== 'string') {
    throw new WebhookError('invalid_payload', 'Invalid email service payload: event (invalid_type).');
  }
  if (headerName !== undefined && bodyName !== undefined && headerName !== bodyName) {
    throw new WebhookError(
      'event_mismatch',
      `The ${names.event} header names a different event than the body's "event" field.`,
    );
  }
  const name = headerName ?? bodyName;
  if (name === undefined || name.length === 0) {
    throw new WebhookError(
      'event_missing',
      `No event name: neither a ${names.event} header nor a body "event".`,
    );
  }

  // email-service §6 rule 2: the delivery id is the dedup key, so a delivery without one is refused.
  const deliveryId = readHeaderString(headers, names.deliveryId);
  if (deliveryId === undefined) {
    throw new WebhookError('delivery_id_missing', `The ${names.deliveryId} header is missing or empty.`);
  }

  const { secretIndex } = options;
  const schema = schemas.get(name);
  if (schema === undefined) return { service: 'mail', known: false, name, deliveryId, payload, secretIndex };
  const result = schema.safeParse(payload);
  if (!result.success) throw invalidPayload(`${name} payload`, result.error);
  return { service: 'mail', known: true, name, deliveryId, payload: result.data, secretIndex } as MailEvent;
}
