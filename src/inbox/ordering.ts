/**
 * The ordering key and event time of a delivery, read from its verified body: the rows of one key run
 * one at a time, oldest event first (docs/inbox-ordering.md "Ordering"). Defaults from the specs' data fields:
 * the CRM's deal, contact, campaign and journey enrollment ids (crm-service §6), the email service's
 * `message_id` (email-service §6).
 */
import { eventTimeOf } from '../core/lag.js';
import { sha256Hex } from '../dedup/bound-key.js';

/**
 * What an `orderingKey` option reads: the service, the event name and the parsed JSON body.
 *
 * @example
 * ```ts
 * const byTenant = ({ payload }: OrderingInput) => String((payload as { tenant_id?: string }).tenant_id);
 * ```
 */
export interface OrderingInput {
  service: string;
  event: string;
  payload: unknown;
}

const MAX_KEY = 256;

function field(object: unknown, name: string): string | undefined {
  if (typeof object !== 'object' || object === null) return undefined;
  const value = (object as Record<string, unknown>)[name];
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** CRM events: the entity whose state the event changes. */
function crmKey(event: string, payload: unknown): string | undefined {
  const data = (payload as { data?: unknown } | null)?.data;
  const [entity] = event.split('.');
  const id =
    entity === 'deal'
      ? field(data, 'deal_id')
      : entity === 'contact'
        ? (field(data, 'contact_id') ?? field(data, 'id'))
        : entity === 'campaign'
          ? field(data, 'campaign_id')
          : entity === 'journey'
            ? field(data, 'enrollment_id')
            : undefined;
  if (id === undefined) return undefined;
  const kind = entity === 'journey' ? 'enrollment' : entity;
  return `crm:${kind}:${id}`;
}

/** The default ordering key of an event, or `null` when its events need no order. */
export function defaultOrderingKey({ service, event, payload }: OrderingInput): string | null {
  if (service === 'crm') return crmKey(event, payload) ?? null;
  if (service === 'mail') {
    const id = field(payload, 'message_id');
    return id === undefined ? null : `mail:message:${id}`;
  }
  return null;
}

/**
 * The body's `timestamp` (both services: ISO 8601 with milliseconds), or `fallback`: read as the
 * lag reads it (core/lag.ts: the services' form digit by digit, any other through `Date.parse`).
 */
export function eventTime(payload: unknown, fallback: number): number {
  return eventTimeOf(field(payload, 'timestamp')) ?? fallback;
}

/**
 * `key` as the table stores it: a key with U+0000 (which PostgreSQL text cannot hold) becomes its
 * text up to the last `:` before the first U+0000, then `sha256:` and the SHA-256 of the whole key
 * (`crm:deal:sha256:<hex>`). Deterministic, so every event of that entity still shares one key, on
 * either database; list filters go through it too.
 */
export function storedKey(key: string): string {
  const nul = nulAt(key);
  if (nul < 0) return key;
  return `${key.slice(0, key.lastIndexOf(':', nul) + 1)}sha256:${sha256Hex(key)}`;
}

/** Where `key`'s first U+0000 is, or -1: a loop over a short key costs less than `indexOf`'s call. */
function nulAt(key: string): number {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) === 0) return i;
  return -1;
}

/** A key within bounds, as stored (see {@link storedKey}), or null (a longer one is not an entity id). */
export function boundedKey(key: unknown): string | null {
  return typeof key === 'string' && key.length > 0 && key.length <= MAX_KEY ? storedKey(key) : null;
}
