import { createHmac, randomUUID } from 'node:crypto';

/** A signed request, as the services send it (signatures computed with node:crypto, not our signer). */
export interface Delivery {
  service: 'mail' | 'crm';
  deliveryId: string;
  event: string;
  body: string;
  headers: Record<string, string>;
}

export const MAIL_SECRET = 'whsec_mail_conformance_0123456789';
export const CRM_SECRET = 'whsec_crm_conformance_0123456789';

export function hmac(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** An email-service delivery (email-service §6): event, signature and id headers. */
export function mailDelivery(
  options: { event?: string; deliveryId?: string; body?: string; secret?: string } = {},
): Delivery {
  const { event = 'delivered', deliveryId = `d_${randomUUID()}`, secret = MAIL_SECRET } = options;
  const body =
    options.body ??
    JSON.stringify({
      event,
      client_id: 'client_1',
      message_id: `m_${deliveryId}`,
      to: 'ana@example.com',
      provider: 'gmail',
      timestamp: '2025-01-02T03:04:05.678Z',
    });
  return {
    service: 'mail',
    deliveryId,
    event,
    body,
    headers: {
      'content-type': 'application/json',
      'x-svcmail-event': event,
      'x-svcmail-id': deliveryId,
      'x-svcmail-sig': hmac(secret, body),
    },
  };
}

/** A CRM delivery (crm-service §2 envelope, §6 headers). */
export function crmDelivery(
  options: { event?: string; deliveryId?: string; secret?: string } = {},
): Delivery {
  const { event = 'contact.created', deliveryId = randomUUID(), secret = CRM_SECRET } = options;
  const body = JSON.stringify({
    id: deliveryId,
    event,
    timestamp: '2025-01-02T03:04:05.678Z',
    tenant_id: 'tenant_1',
    data: { id: 'ct_1', email: 'ana@example.com', first_name: 'Ana', tags: ['lead'] },
  });
  return {
    service: 'crm',
    deliveryId,
    event,
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Svc-CRM-Webhook/1.0',
      'x-svc-event': event,
      'x-svc-delivery': deliveryId,
      'x-svc-signature': hmac(secret, body),
    },
  };
}

/** Makes a JSON body of about `bytes` bytes (padding in a field the schemas let through). */
export function paddedMailDelivery(bytes: number, deliveryId?: string): Delivery {
  const base = mailDelivery({ deliveryId });
  const payload = JSON.parse(base.body) as Record<string, unknown>;
  payload.response = 'x'.repeat(Math.max(0, bytes - base.body.length - 14));
  return mailDelivery({ deliveryId: base.deliveryId, body: JSON.stringify(payload) });
}
