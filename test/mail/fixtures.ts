import { createHmac } from 'node:crypto';
import type { MailEventName } from '../../src/index.js';

export const SECRET = 'whsec_mail_test_secret';

/** Signature computed with node:crypto, never with the library's signer. */
export function sign(body: string | Uint8Array, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Node-style headers (lowercase keys) for a signed delivery. */
export function mailHeaders(body: string, name: string | undefined, deliveryId = 'dlv_123', secret = SECRET) {
  const headers: Record<string, string> = { 'x-svcmail-sig': sign(body, secret), 'x-svcmail-id': deliveryId };
  if (name !== undefined) headers['x-svcmail-event'] = name;
  return headers;
}

const sending = {
  client_id: 'client_1',
  message_id: 'msg_1',
  to: 'ana@example.com',
  provider: 'gmail',
  from: 'news@shop.example',
  response: '250 2.0.0 OK',
  latency_ms: 842,
  timestamp: '2024-05-01T10:00:00.123Z',
};
const engagement = {
  client_id: 'client_1',
  message_id: 'msg_1',
  to: 'ana@example.com',
  timestamp: '2024-05-01T10:05:00.000Z',
};

export interface MailCase {
  name: MailEventName;
  sample: Record<string, unknown>;
  /** Fields whose absence must be refused. */
  required: string[];
  /** A field and a value of the wrong type. */
  wrongType: [string, unknown];
}

export const MAIL_CASES: MailCase[] = [
  ...(['delivered', 'deferred', 'bounced', 'complained'] as const).map((name) => ({
    name,
    sample: { event: name, ...sending },
    required: ['client_id', 'message_id', 'to', 'provider'],
    wrongType: ['latency_ms', '842'] as [string, unknown],
  })),
  {
    name: 'blocked',
    sample: { event: 'blocked', client_id: 'client_1', message_id: 'msg_1', to: 'ana@example.com' },
    required: ['client_id', 'message_id', 'to'],
    wrongType: ['message_id', 42],
  },
  {
    name: 'opened',
    sample: engagement,
    required: ['client_id', 'message_id', 'to', 'timestamp'],
    wrongType: ['timestamp', 1714557900000],
  },
  {
    name: 'clicked',
    sample: { ...engagement, url: 'https://shop.example/sale' },
    required: ['client_id', 'message_id', 'to', 'timestamp', 'url'],
    wrongType: ['url', { href: 'x' }],
  },
  {
    name: 'unsubscribed',
    sample: engagement,
    required: ['client_id', 'message_id', 'to', 'timestamp'],
    wrongType: ['to', ['ana@example.com']],
  },
  {
    name: 'domain_verified',
    sample: { client_id: 'client_1', domain: 'shop.example' },
    required: ['client_id'],
    wrongType: ['domain', 7],
  },
  {
    name: 'ip_paused',
    sample: { client_id: 'client_1', ip: '203.0.113.7' },
    required: ['client_id'],
    wrongType: ['client_id', 1],
  },
  {
    name: 'reputation_dropped',
    sample: { client_id: 'client_1', ip: '203.0.113.7', bounce_rate: 0.08, complaint_rate: 0.004 },
    required: ['client_id'],
    wrongType: ['bounce_rate', 'high'],
  },
  {
    name: 'billing_threshold_reached',
    sample: { client_id: 'client_1', threshold: 80 },
    required: ['client_id'],
    wrongType: ['client_id', null],
  },
  {
    name: 'incident_escalated',
    sample: { client_id: 'client_1', severity: 'high' },
    required: ['client_id'],
    wrongType: ['event', 5],
  },
];
