/**
 * What a target that quarantines (the database inbox) keeps of an authentic delivery the receiver
 * cannot run: its event as far as it reads without the schema, and the key its row takes
 * (docs/inbox-quarantine.md "What the inbox keeps"). The other refusals stay refusals there too.
 */
import { dedupKeyOfDeliveryId } from '../dedup/key-strategy.js';
import { isWebhookError, type WebhookError } from '../shared/errors.js';
import type { DispatchableEvent } from './handler-registry.js';
import { readHeaderString } from './read-header.js';
import type { HeadersInput } from './receiver-types.js';
import type { ServiceSpec } from './service-spec.js';

/**
 * The parse failures of a verified body that are kept: the payload failed the schema (or the app's
 * repair of it threw), the body is not
 * JSON, or its event name is missing or disagrees with the header. Not kept: a delivery id missing or
 * malformed (no key to store it under), a CRM header id that differs from the signed `id`, and an event
 * older than `maxEventAgeMs` (the replay defence the app asked for: storing it would let a captured
 * body add rows).
 */
const KEPT: ReadonlySet<string> = new Set([
  'invalid_payload',
  // The app's repair of it threw (core/repair.ts): kept for a re-drive once the repair is fixed.
  'repair_failed',
  'invalid_json',
  'event_missing',
  'event_mismatch',
]);

/**
 * The failures of an authentic inbox row, run again, that keep it `quarantined` rather than `dead`:
 * its payload still fails the schema, or the app's repair of it threw (docs/inbox.md "When the payload
 * changes"). The others mean its stored headers were changed: `job_invalid`.
 */
export const KEPT_AGAIN: ReadonlySet<string> = new Set(['invalid_payload', 'repair_failed']);

// Failures of the unsigned event header: the row is keyed apart from the delivery it copies, so a copy
// whose header was changed never takes the genuine delivery's key (which would then be a duplicate
// and never run).
const APART: ReadonlySet<string> = new Set(['event_missing', 'event_mismatch']);

/** The row of a delivery that failed `error`, or undefined when it is refused instead. */
export function quarantined(
  spec: ServiceSpec,
  error: unknown,
  body: Uint8Array,
  headers: HeadersInput,
  secretIndex: number,
): { event: DispatchableEvent; dedupKey: string; error: WebhookError } | undefined {
  if (!isWebhookError(error) || !KEPT.has(error.code)) return undefined;
  const { service, headerNames } = spec;
  // Keyed by the receiver's own strategy where the body reads: a body replayed under fresh ids is one
  // row (docs/security.md "Replay with fresh ids").
  const read = spec.unvalidated?.(body, headers, secretIndex);
  const deliveryId = read?.deliveryId ?? readHeaderString(headers, headerNames.deliveryId);
  const name = read?.name ?? readHeaderString(headers, headerNames.event);
  if (!deliveryId || !name) return undefined;
  let dedupKey: string;
  try {
    dedupKey = read ? spec.dedupKey(read) : dedupKeyOfDeliveryId(service, deliveryId);
  } catch {
    dedupKey = dedupKeyOfDeliveryId(service, deliveryId);
  }
  if (APART.has(error.code)) dedupKey = `${dedupKey}:${error.code}`;
  const event = read ?? ({ deliveryId, name, known: false } as DispatchableEvent);
  return { event, dedupKey, error };
}
