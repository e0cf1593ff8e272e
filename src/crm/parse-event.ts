import { assertFresh, checkMaxEventAge } from '../core/event-age.js';
import { readHeaderString } from '../core/read-header.js';
import type { HeadersInput } from '../core/receiver-types.js';
import { atReceipt, type Clock, systemClock } from '../shared/clock.js';
import { WebhookError } from '../shared/errors.js';
import { parseWithMini } from '../shared/mini-parse.js';
import { invalidPayload, parseJsonObject } from '../shared/parse-json.js';
import { type RawBody, toBytes } from '../verify/bytes.js';
import { type CrmHeaderNames, resolveCrmHeaderNames } from './header-names.js';
import { crmParseSchemas } from './parse-schemas.js';
import type { CrmAnyEnvelope, CrmEvent, CrmWebhookEvent } from './types.js';

/**
 * Options of {@link parseCrmEvent}.
 *
 * @example
 * ```ts
 * const options: ParseCrmEventOptions = { secretIndex: 0, headerNames: { event: 'X-Acme-Event' } };
 * ```
 *
 * @example
 * ```ts
 * import type { ParseCrmEventOptions } from '@svc/webhooks';
 *
 * // Name the type where your code holds one: a helper's parameter or result.
 * export function keep(value: ParseCrmEventOptions): ParseCrmEventOptions {
 *   return value;
 * }
 * ```
 */
export interface ParseCrmEventOptions {
  /** Which secret verified the signature (from `verifySignature`), carried into the event. */
  secretIndex: number;
  /** Renamed headers ("Svc" stands for the vendor's name); defaults are {@link CRM_HEADER_NAMES}. */
  headerNames?: Partial<CrmHeaderNames>;
  /**
   * Refuse events whose signed envelope `timestamp` is older than this many ms (`event_too_old`) or
   * more than 5 minutes ahead (`event_in_future`). Default: no limit (docs/security.md).
   */
  maxEventAgeMs?: number;
  /** Source of time (epoch ms) for `maxEventAgeMs`; default the wall clock. */
  clock?: Clock;
}

// crm-service §2: the id is a UUID. The 8-4-4-4-12 hex form, any version (as the envelope schema).
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The parse step after the signature was verified: JSON, event name, delivery id, envelope and data
 * schema and, when asked, the age of the signed timestamp. Throws a `WebhookError` (invalid_json,
 * event_missing, event_mismatch, delivery_id_missing, delivery_id_invalid, delivery_id_mismatch,
 * invalid_payload, event_too_old, event_in_future); an event name this version does not know gives
 * `known: false` with the envelope checked and `data` as sent, never an error. Only call it with a
 * body whose signature you verified; {@link constructCrmEvent} does both.
 */
export function parseCrmEvent(
  body: RawBody,
  headers: HeadersInput,
  options: ParseCrmEventOptions,
): CrmWebhookEvent {
  const settings = settingsOf('parseCrmEvent', options);
  return readCrmEvent(settings, toBytes(body), headers, options.secretIndex, undefined);
}

/** {@link ParseCrmEventOptions} resolved and checked once. */
interface CrmParseSettings {
  readonly names: Readonly<CrmHeaderNames>;
  readonly maxEventAgeMs: number | undefined;
  readonly clock: Clock;
}

function settingsOf(where: string, options: Omit<ParseCrmEventOptions, 'secretIndex'>): CrmParseSettings {
  return {
    names: resolveCrmHeaderNames(options.headerNames),
    maxEventAgeMs: checkMaxEventAge(where, options.maxEventAgeMs),
    clock: options.clock ?? systemClock,
  };
}

/**
 * The receiver's parse step: {@link parseCrmEvent} with its options resolved once, when the receiver
 * is made, instead of on every delivery. `receivedAt` (a hand-off worker's job) times the age check at
 * receipt.
 */
export function crmEventParser(
  where: string,
  options: Omit<ParseCrmEventOptions, 'secretIndex'>,
): (body: Uint8Array, headers: HeadersInput, secretIndex: number, receivedAt?: number) => CrmWebhookEvent {
  const settings = settingsOf(where, options);
  return (body, headers, secretIndex, receivedAt) =>
    readCrmEvent(settings, body, headers, secretIndex, receivedAt);
}

function readCrmEvent(
  settings: CrmParseSettings,
  bytes: Uint8Array,
  headers: HeadersInput,
  secretIndex: number,
  receivedAt: number | undefined,
): CrmWebhookEvent {
  const { names, maxEventAgeMs } = settings;
  const json = parseJsonObject(bytes, 'CRM');

  // crm-service §6 rule 1: the event type is in the body; the header is only cross-checked.
  const name = json.event;
  if (typeof name !== 'string' || name.length === 0) {
    throw new WebhookError('event_missing', 'The CRM webhook body has no "event" string.');
  }
  const headerName = readHeaderString(headers, names.event);
  if (headerName !== undefined && headerName !== name) {
    throw new WebhookError(
      'event_mismatch',
      `The ${names.event} header names a different event than the body.`,
    );
  }

  // crm-service §2: the body's id is the delivery id, "equal to header X-Svc-Delivery".
  const deliveryId = json.id;
  if (typeof deliveryId !== 'string' || deliveryId.length === 0) {
    throw new WebhookError('delivery_id_missing', 'The CRM webhook body has no "id" string.');
  }
  // Checked before any comparison or key: one answer for every malformed id (docs/security.md).
  if (!UUID.test(deliveryId)) {
    throw new WebhookError(
      'delivery_id_invalid',
      `The CRM webhook body's "id" must be a UUID (got ${deliveryId.length} characters).`,
    );
  }
  const headerId = readHeaderString(headers, names.deliveryId);
  if (headerId !== undefined && headerId !== deliveryId) {
    throw new WebhookError(
      'delivery_id_mismatch',
      `The ${names.deliveryId} header differs from the body's "id".`,
    );
  }

  const { byName, anyEnvelope } = crmParseSchemas();
  const schema = byName.get(name);
  const result = parseWithMini<CrmAnyEnvelope>(schema ?? anyEnvelope, json);
  if (!result.success) throw invalidPayload(`${name} envelope`, result.error);
  const envelope = result.data;
  const { tenant_id: tenantId, timestamp, data } = envelope;
  // crm-service §2: every envelope carries the signed timestamp, so the age check always applies.
  if (maxEventAgeMs !== undefined)
    assertFresh(timestamp, maxEventAgeMs, atReceipt(settings.clock, receivedAt), 'CRM');
  if (schema === undefined) {
    return {
      service: 'crm',
      known: false,
      name,
      deliveryId,
      tenantId,
      timestamp,
      data,
      envelope,
      secretIndex,
    };
  }
  return {
    service: 'crm',
    known: true,
    name,
    deliveryId,
    tenantId,
    timestamp,
    data,
    envelope,
    secretIndex,
  } as CrmEvent;
}
