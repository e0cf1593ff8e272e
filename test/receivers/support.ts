/**
 * Signed deliveries for receiver tests. Signatures are computed with node:crypto, never with the
 * library's signer.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { type HttpAnswer, httpAnswer, type Verdict, type WebhookReceiverLike } from '@svc/webhooks';

export const MAIL_SECRET = 'whsec_receiver_mail_test';
export const CRM_SECRET = 'whsec_receiver_crm_test';

export function sign(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** One delivery: exact bytes plus Node-style (lowercase) headers. */
export interface Delivery {
  body: Uint8Array;
  headers: Record<string, string>;
  deliveryId: string;
}

const encoder = new TextEncoder();

export interface MailDeliveryOptions {
  deliveryId?: string;
  messageId?: string;
  payload?: Record<string, unknown>;
  secret?: string;
  /** Raw body text instead of the JSON of the payload. */
  rawBody?: string;
}

/** A signed email-service delivery; `delivered` with a valid sending payload by default. */
export function mailDelivery(event = 'delivered', options: MailDeliveryOptions = {}): Delivery {
  const deliveryId = options.deliveryId ?? `dlv_${randomUUID()}`;
  const payload = options.payload ?? {
    event,
    client_id: 'client_1',
    message_id: options.messageId ?? 'msg_1',
    to: 'ana@example.com',
    provider: 'gmail',
    timestamp: '2024-05-01T10:00:00.123Z',
  };
  const text = options.rawBody ?? JSON.stringify(payload);
  return {
    body: encoder.encode(text),
    headers: {
      'content-type': 'application/json',
      'x-svcmail-event': event,
      'x-svcmail-id': deliveryId,
      'x-svcmail-sig': sign(text, options.secret ?? MAIL_SECRET),
    },
    deliveryId,
  };
}

export interface CrmDeliveryOptions {
  deliveryId?: string;
  data?: unknown;
  secret?: string;
  rawBody?: string;
  /** Overrides of the X-Svc-Delivery header (mismatch tests). */
  headerDeliveryId?: string;
  /** The envelope's `tenant_id`; default `tenant_1`. */
  tenantId?: string;
}

const CRM_DATA: Record<string, unknown> = {
  'deal.won': { deal_id: 'd_1', title: 'Big deal', value: 1500.5 },
  'deal.lost': { deal_id: 'd_1', title: 'Big deal' },
  'deal.stage_changed': { deal_id: 'd_1', title: 'Big deal', stage_id: 's_2' },
};

/** A signed CRM delivery; `deal.won` by default. */
export function crmDelivery(event = 'deal.won', options: CrmDeliveryOptions = {}): Delivery {
  const deliveryId = options.deliveryId ?? randomUUID();
  const envelope = {
    id: deliveryId,
    event,
    timestamp: '2024-05-01T10:00:00.000Z',
    tenant_id: options.tenantId ?? 'tenant_1',
    data: options.data ?? CRM_DATA[event] ?? {},
  };
  const text = options.rawBody ?? JSON.stringify(envelope);
  return {
    body: encoder.encode(text),
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Svc-CRM-Webhook/1.0',
      'x-svc-event': event,
      'x-svc-delivery': options.headerDeliveryId ?? deliveryId,
      'x-svc-signature': sign(text, options.secret ?? CRM_SECRET),
    },
    deliveryId,
  };
}

/** A delivery's verdict with the HTTP answer the sender gets for it. */
export type Delivered = HttpAnswer & {
  verdict: Verdict;
  kind: Verdict['kind'];
  code: string | undefined;
  deliveryId: string | undefined;
  event: string | undefined;
};

/** The verdict and its HTTP answer side by side. */
export function answered(verdict: Verdict): Delivered {
  return {
    ...httpAnswer(verdict),
    verdict,
    kind: verdict.kind,
    code: 'code' in verdict ? verdict.code : undefined,
    deliveryId: verdict.deliveryId,
    event: verdict.event,
  };
}

/** Sends `delivery` through `receive` as a Node adapter would. */
export async function deliver(
  receiver: WebhookReceiverLike,
  delivery: Delivery,
  method = 'POST',
): Promise<Delivered> {
  return answered(await receiver.receive({ body: delivery.body, headers: delivery.headers, method }));
}

/** The same delivery as a web Request. */
export function toRequest(delivery: Delivery, init: RequestInit = {}): Request {
  return new Request('http://127.0.0.1/webhooks', {
    method: 'POST',
    body: delivery.body,
    headers: delivery.headers,
    ...init,
  });
}

/** A promise and its resolver, to hold a handler open. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Statuses that make the services retry later (never 2xx, never 3xx). */
export const RETRY_INVITING = new Set([409, 429, 500, 502, 503, 504]);
