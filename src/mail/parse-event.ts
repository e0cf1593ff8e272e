import { isValidDeliveryId, MAX_DELIVERY_ID_LENGTH } from '../core/delivery-id.js';
import { assertFresh, checkMaxEventAge } from '../core/event-age.js';
import { readHeaderString } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { atReceipt, type Clock, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { parseWithMini } from '../shared/mini-parse.js';
import { invalidPayload, type JsonObject, parseJsonObject } from '../shared/parse-json.js';
import { type RawBody, toBytes } from '../verify/bytes.js';
import { type MailHeaderNames, resolveMailHeaderNames } from './header-names.js';
import { mailParseSchemas } from './parse-schemas.js';
import type { MailEvent, MailWebhookEvent } from './types.js';

/**
 * Options of {@link parseMailEvent}.
 *
 * @example
 * ```ts
 * const options: ParseMailEventOptions = { secretIndex: 0, headerNames: { event: 'X-AcmeMAIL-Event' } };
 * ```
 *
 * @example
 * ```ts
 * import type { ParseMailEventOptions } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: ParseMailEventOptions): ParseMailEventOptions {
 *   return value;
 * }
 * ```
 */
export interface ParseMailEventOptions {
  /** Which secret verified the signature (from `verifySignature`), carried into the event. */
  secretIndex: number;
  /** Renamed headers ("Svc" stands for the vendor's name); defaults are {@link MAIL_HEADER_NAMES}. */
  headerNames?: Partial<MailHeaderNames>;
  /**
   * Refuse a body without its own `event` field (`event_missing`), so the unsigned `X-SvcMAIL-Event`
   * header cannot relabel a captured body (docs/security.md). Default `false`: the spec shows the
   * field only in its sending-event example (email-service §6).
   */
  requireBodyEvent?: boolean;
  /**
   * Refuse events whose signed body `timestamp` is older than this many ms (`event_too_old`) or more
   * than 5 minutes ahead (`event_in_future`). Events without a `timestamp` pass. Default: no limit.
   */
  maxEventAgeMs?: number;
  /** Source of time (epoch ms) for `maxEventAgeMs`; default the wall clock. */
  clock?: Clock;
}

/**
 * The parse step after the signature was verified: JSON, event name, delivery id, schema and, when
 * asked, the age of the signed timestamp. Throws a `WebhookError` (invalid_json, event_missing,
 * event_mismatch, delivery_id_missing, delivery_id_invalid, invalid_payload, event_too_old,
 * event_in_future); an event name this version does not know gives `known: false`, never an error.
 * Only call it with a body whose signature you verified; {@link constructMailEvent} does both.
 */
export function parseMailEvent(
  body: RawBody,
  headers: HeadersInput,
  options: ParseMailEventOptions,
): MailWebhookEvent {
  const settings = settingsOf('parseMailEvent', options);
  return readMailEvent(settings, toBytes(body), headers, options.secretIndex, undefined);
}

/** {@link ParseMailEventOptions} resolved and checked once. */
interface MailParseSettings {
  readonly names: Readonly<MailHeaderNames>;
  readonly requireBodyEvent: boolean;
  readonly maxEventAgeMs: number | undefined;
  readonly clock: Clock;
}

function settingsOf(where: string, options: Omit<ParseMailEventOptions, 'secretIndex'>): MailParseSettings {
  return {
    names: resolveMailHeaderNames(options.headerNames),
    requireBodyEvent: options.requireBodyEvent === true,
    maxEventAgeMs: checkMaxEventAge(where, options.maxEventAgeMs),
    clock: options.clock ?? systemClock,
  };
}

/**
 * The receiver's parse step: {@link parseMailEvent} with its options resolved once, when the receiver
 * is made, instead of on every delivery. `receivedAt` (a hand-off worker's job) times the age check at
 * receipt.
 */
export function mailEventParser(
  where: string,
  options: Omit<ParseMailEventOptions, 'secretIndex'>,
): (body: Uint8Array, headers: HeadersInput, secretIndex: number, receivedAt?: number) => MailWebhookEvent {
  const settings = settingsOf(where, options);
  return (body, headers, secretIndex, receivedAt) =>
    readMailEvent(settings, body, headers, secretIndex, receivedAt);
}

/**
 * The receiver's read of verified bytes it cannot run (core/quarantine.ts): the event as one this
 * version does not know (payload unvalidated), its delivery id read as {@link parseMailEvent} reads
 * it and its name from the signed body first, then the header (so a header that disagrees with the
 * body, or a body without `event`, still reads); undefined when they cannot be read. A quarantined
 * delivery is keyed from it.
 */
export function mailUnvalidatedReader(
  where: string,
  options: Omit<ParseMailEventOptions, 'secretIndex'>,
): (body: Uint8Array, headers: HeadersInput, secretIndex: number) => MailWebhookEvent | undefined {
  const settings = settingsOf(where, options);
  return (body, headers, secretIndex) => {
    try {
      return readMailEvent(settings, body, headers, secretIndex, undefined, false);
    } catch {
      return undefined;
    }
  };
}

function readMailEvent(
  settings: MailParseSettings,
  bytes: Uint8Array,
  headers: HeadersInput,
  secretIndex: number,
  receivedAt: number | undefined,
  validate = true,
): MailWebhookEvent {
  const { names, maxEventAgeMs } = settings;
  const payload = parseJsonObject(bytes, 'email service');

  // email-service §6: the body's `event` is "always in the sending-event example" only, so the
  // header is the source; the body's value, when present, must agree.
  const headerName = readHeaderString(headers, names.event);
  const bodyName = payload.event;
  if (bodyName !== undefined && typeof bodyName !== 'string') {
    throw new WebhookError('invalid_payload', 'Invalid email service payload: event (invalid_type).');
  }
  if (bodyName === undefined && settings.requireBodyEvent && validate) {
    // The header is not signed: without the body's own name, a captured `delivered` could be
    // presented as `bounced` (docs/security.md).
    throw new WebhookError(
      'event_missing',
      'The email service body has no "event" field, and requireBodyEvent is set: the unsigned header alone is not trusted.',
    );
  }
  if (validate && headerName !== undefined && bodyName !== undefined && headerName !== bodyName) {
    throw new WebhookError(
      'event_mismatch',
      `The ${names.event} header names a different event than the body's "event" field.`,
    );
  }
  // Read without the schema (a quarantined delivery's row), the signed body's name wins.
  const name = validate ? (headerName ?? bodyName) : (bodyName ?? headerName);
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
  // The id is opaque and unsigned: bounded before it becomes a dedup key (docs/security.md).
  if (!isValidDeliveryId(deliveryId)) {
    throw new WebhookError(
      'delivery_id_invalid',
      `The ${names.deliveryId} header must be 1 to ${MAX_DELIVERY_ID_LENGTH} visible ASCII characters (got ${deliveryId.length} characters).`,
    );
  }

  const schema = validate ? mailParseSchemas().get(name) : undefined;
  if (!validate) return { service: 'mail', known: false, name, deliveryId, payload, secretIndex };
  if (schema === undefined) {
    if (maxEventAgeMs !== undefined) checkAge(payload.timestamp, maxEventAgeMs, settings.clock, receivedAt);
    return { service: 'mail', known: false, name, deliveryId, payload, secretIndex };
  }
  const result = parseWithMini<JsonObject>(schema, payload);
  if (!result.success) throw invalidPayload(`${name} payload`, result.error);
  if (maxEventAgeMs !== undefined) checkAge(payload.timestamp, maxEventAgeMs, settings.clock, receivedAt);
  return { service: 'mail', known: true, name, deliveryId, payload: result.data, secretIndex } as MailEvent;
}

// email-service §6: `timestamp` is shown for opened, unsubscribed, clicked and the sending example
// only, so an event without one cannot be aged and passes (docs/security.md).
function checkAge(
  timestamp: unknown,
  maxEventAgeMs: number,
  clock: Clock,
  receivedAt: number | undefined,
): void {
  if (timestamp === undefined) return;
  if (typeof timestamp !== 'string') {
    throw new WebhookError('invalid_payload', 'Invalid email service payload: timestamp (invalid_type).');
  }
  assertFresh(timestamp, maxEventAgeMs, atReceipt(clock, receivedAt), 'email service');
}
