/**
 * What differs between services, as data the shared pipeline is driven by. The pipeline names no
 * service: each service folder (`src/mail/`, `src/crm/`) builds its spec and calls `createReceiver`.
 */
import type { DispatchableEvent } from './handler-registry.js';
import type { HeadersInput } from './receiver-types.js';
import type { SecretRequest } from './route-secrets.js';
import type { ForeignSignature } from './signature-refusal.js';

/** What differs between the services. Header names are lowercase. */
export interface ServiceSpec<E extends DispatchableEvent = DispatchableEvent> {
  /** The service's name: in every verdict, log line, dedup key prefix and hand-off job. */
  service: string;
  headerNames: { readonly signature: string; readonly deliveryId: string; readonly event: string };
  /** The other services' signature headers: named in a `signature_missing` refusal when present. */
  foreignSignatures?: readonly ForeignSignature[];
  /** The event names this version knows (for `on()`'s typo check). */
  knownNames: readonly string[];
  /**
   * Parses verified bytes; throws a `WebhookError` (400s) for anything that is not a valid event.
   * `receivedAt` (a hand-off worker's job) times the event-age check at receipt, not now.
   */
  parse(body: Uint8Array, headers: HeadersInput, secretIndex: number, receivedAt?: number): E;
  /**
   * Verified bytes whose payload failed the schema (`invalid_payload`), read as an event this version
   * does not know (`known: false`, payload unvalidated) with its name and delivery id from the same
   * sources as `parse`: what the dedup key of a quarantined delivery is computed from. Undefined when
   * neither can be read.
   */
  unvalidated?(body: Uint8Array, headers: HeadersInput, secretIndex: number): E | undefined;
  /**
   * The paths of a parsed event's payload its schema does not know, or `[""]` for an event this
   * version does not know (core/drift.ts). Never throws.
   */
  drift?(event: E): readonly string[];
  /**
   * The signed body's `timestamp` of a parsed event, as the body holds it (a string, or anything for
   * an event this version does not know): the start of its lag (core/lag.ts). Never throws.
   */
  timestamp?(event: E): unknown;
  /** The namespaced dedup key (`mail:…`, `crm:…`); may throw (a user's key function). */
  dedupKey(event: E): string;
  /**
   * A receiver that binds routes to tenants (CRM `routeTenant`): the tenant of a route (may throw:
   * the user's function), and the tenant an event names (core/route-tenant.ts compares them).
   */
  tenants?: {
    route(route: SecretRequest): unknown;
    event(event: E): string;
  };
}
