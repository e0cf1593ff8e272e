/** The checks a receiver makes, on a saved delivery: signature, then JSON, event, delivery id, schema. */

import { constructCrmEvent } from '../crm/construct-event.js';
import { constructMailEvent } from '../mail/construct-event.js';
import { isWebhookError } from '../shared/errors.js';
import { verifySignature } from '../verify/verify-signature.js';
import type { Service } from './events.js';
import { FIXES } from './fixes.js';

/** The outcome of {@link checkDelivery}. `secret` is 1-based; never the secret itself. */
export type DeliveryCheck =
  | { ok: true; secret: { index: number; of: number }; event: string; deliveryId: string; bytes: number }
  | {
      ok: false;
      error: { code: string; message: string; fix?: string };
      /** Set when the signature matched and a later check failed. */
      secret?: { index: number; of: number };
      bytes: number;
    };

/** Checks `body` and `headers` with each of `secrets`, as a receiver would. */
export async function checkDelivery(
  service: Service,
  secrets: readonly string[],
  headers: Headers,
  body: Uint8Array,
  vendor: string,
): Promise<DeliveryCheck> {
  const names =
    service === 'mail'
      ? { signature: `X-${vendor}MAIL-Sig`, event: `X-${vendor}MAIL-Event`, deliveryId: `X-${vendor}MAIL-Id` }
      : {
          signature: `X-${vendor}-Signature`,
          event: `X-${vendor}-Event`,
          deliveryId: `X-${vendor}-Delivery`,
        };
  const bytes = body.byteLength;
  const checked = await verifySignature(body, headers.get(names.signature) ?? undefined, secrets);
  if (!checked.ok) return { ok: false, error: withFix(checked.code, checked.message), bytes };
  const secret = { index: checked.secretIndex + 1, of: secrets.length };
  try {
    const event =
      service === 'mail'
        ? await constructMailEvent(body, headers, secrets, { headerNames: names })
        : await constructCrmEvent(body, headers, secrets, { headerNames: names });
    return { ok: true, secret, event: event.name, deliveryId: event.deliveryId, bytes };
  } catch (error) {
    if (!isWebhookError(error)) throw error;
    return { ok: false, error: withFix(error.code, error.message), secret, bytes };
  }
}

function withFix(code: string, message: string): { code: string; message: string; fix?: string } {
  const fix = FIXES[code];
  return fix ? { code, message, fix } : { code, message };
}
