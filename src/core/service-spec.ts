/**
 * What differs between the two services, as data the shared receive path is driven by.
 */
import type { DispatchableEvent } from './handler-registry.js';
import type { HeadersInput } from './receiver-types.js';

/** What differs between the services. Header names are lowercase. */
export interface ServiceSpec<E extends DispatchableEvent> {
  service: 'mail' | 'crm';
  headerNames: { readonly signature: string; readonly deliveryId: string; readonly event: string };
  /**
   * Parses verified bytes; throws a `WebhookError` (400s) for anything that is not a valid event.
   * `receivedAt` (a hand-off worker's job) times the event-age check at receipt, not now.
   */
  parse(body: Uint8Array, headers: HeadersInput, secretIndex: number, receivedAt?: number): E;
  /** The namespaced dedup key (`mail:…`, `crm:…`); may throw (a user's key function). */
  dedupKey(event: E): string;
}
