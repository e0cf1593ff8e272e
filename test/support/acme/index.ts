/**
 * A third service that exists only in the tests: its own headers (`X-Acme-*`), its own zod schema and
 * its own dedup key, plugged into the generic receiver exactly as `src/mail/` and `src/crm/` are. It
 * proves the pipeline, an adapter and the hand-off job codec name no service: adding one is this
 * folder plus its registration.
 */
import { z } from 'zod';
import { readHeaderString } from '../../../src/core/read-header.js';
import { createReceiver, type WebhookReceiver } from '../../../src/receiver/create-receiver.js';
import { type ReceiverOptions, resolveOptions } from '../../../src/receiver/receiver-options.js';
import { WebhookError } from '../../../src/shared/errors.js';
import { parseJsonObject } from '../../../src/shared/parse-json.js';

export const ACME_HEADERS = {
  signature: 'x-acme-signature',
  deliveryId: 'x-acme-delivery',
  event: 'x-acme-event',
};

const orderPlaced = z.object({ order_id: z.string().min(1), total_cents: z.number().int().nonnegative() });

export interface AcmeEvent {
  readonly name: 'order.placed';
  readonly known: true;
  readonly deliveryId: string;
  readonly order: z.infer<typeof orderPlaced>;
}

export interface UnknownAcmeEvent {
  readonly name: string;
  readonly known: false;
  readonly deliveryId: string;
  readonly payload: unknown;
}

function parseAcme(
  body: Uint8Array,
  headers: Parameters<typeof readHeaderString>[0],
): AcmeEvent | UnknownAcmeEvent {
  const deliveryId = readHeaderString(headers, ACME_HEADERS.deliveryId);
  if (deliveryId === undefined) throw new WebhookError('delivery_id_missing', 'X-Acme-Delivery is missing.');
  const name = readHeaderString(headers, ACME_HEADERS.event);
  if (name === undefined) throw new WebhookError('event_missing', 'X-Acme-Event is missing.');
  const json = parseJsonObject(body, 'acme');
  if (name !== 'order.placed') return { name, known: false, deliveryId, payload: json };
  const order = orderPlaced.safeParse(json);
  if (!order.success) throw new WebhookError('invalid_payload', 'The order.placed payload is invalid.');
  return { name, known: true, deliveryId, order: order.data };
}

export type AcmeReceiver = WebhookReceiver<AcmeEvent, UnknownAcmeEvent>;

/** The third service's receiver factory: options resolved, spec built, generic receiver returned. */
export function createAcmeReceiver(options: ReceiverOptions): AcmeReceiver {
  const resolved = resolveOptions('createAcmeReceiver', options, 3_600_000);
  return createReceiver<AcmeEvent, UnknownAcmeEvent>(
    {
      service: 'acme',
      headerNames: ACME_HEADERS,
      knownNames: ['order.placed'],
      parse: (body, headers) => parseAcme(body, headers),
      // Its own key: by order, so two deliveries of one order run once.
      dedupKey: (event) =>
        event.known ? `acme:order:${event.order.order_id}` : `acme:delivery:${event.deliveryId}`,
    },
    resolved,
  );
}
