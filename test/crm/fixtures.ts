import { createHmac } from 'node:crypto';
import type { CrmEventName } from '../../src/index.js';

export const SECRET = 'whsec_crm_test_secret';
export const DELIVERY_ID = '3f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f';

/** Signature computed with node:crypto, never with the library's signer. */
export function sign(body: string | Uint8Array, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function envelope(event: string, data: unknown, extra: Record<string, unknown> = {}) {
  return {
    id: DELIVERY_ID,
    event,
    timestamp: '2024-05-01T10:00:00.000Z',
    tenant_id: 'tenant_1',
    data,
    ...extra,
  };
}

/** Node-style headers (lowercase keys) as the CRM service sends them. */
export function crmHeaders(body: string, event?: string, deliveryId: string | undefined = DELIVERY_ID) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-svc-signature': sign(body),
    'user-agent': 'Svc-CRM-Webhook/1.0',
  };
  if (event !== undefined) headers['x-svc-event'] = event;
  if (deliveryId !== undefined) headers['x-svc-delivery'] = deliveryId;
  return headers;
}

export interface CrmCase {
  name: CrmEventName;
  data: Record<string, unknown>;
  required: string[];
  wrongType: [string, unknown];
}

export const CRM_CASES: CrmCase[] = [
  {
    name: 'contact.created',
    data: { id: 'c_1', email: 'ana@example.com', first_name: 'Ana', tags: ['lead', 'newsletter'] },
    required: ['id', 'email', 'first_name', 'tags'],
    wrongType: ['tags', 'lead'],
  },
  {
    name: 'form.submitted',
    data: { form_id: 'f_1', form_name: 'Contact us', contact_id: 'c_1', data: { message: 'Hi' } },
    required: ['form_id', 'form_name', 'contact_id', 'data'],
    wrongType: ['data', 'message=Hi'],
  },
  {
    name: 'deal.stage_changed',
    data: { deal_id: 'd_1', title: 'Big deal', stage_id: 's_2' },
    required: ['deal_id', 'title', 'stage_id'],
    wrongType: ['stage_id', 2],
  },
  {
    name: 'deal.won',
    data: { deal_id: 'd_1', title: 'Big deal', value: 1500.5 },
    required: ['deal_id', 'title', 'value'],
    wrongType: ['value', '1500'],
  },
  {
    name: 'deal.lost',
    data: { deal_id: 'd_1', title: 'Big deal' },
    required: ['deal_id', 'title'],
    wrongType: ['title', false],
  },
  {
    name: 'contact.updated',
    data: { id: 'c_1', fields: { first_name: 'Ana Maria' } },
    required: ['id', 'fields'],
    wrongType: ['fields', 'first_name'],
  },
  {
    name: 'deal.created',
    data: { deal_id: 'd_1', title: 'Big deal', value: 1500, stage_id: 's_1', contact_id: 'c_1' },
    required: ['deal_id', 'title', 'value', 'stage_id', 'contact_id'],
    wrongType: ['deal_id', 1],
  },
  {
    name: 'survey.responded',
    data: { survey_id: 'sv_1', contact_id: 'c_1', score: 9 },
    required: ['survey_id', 'contact_id', 'score'],
    wrongType: ['score', 'nine'],
  },
  {
    name: 'campaign.completed',
    data: { campaign_id: 'cp_1', name: 'May sale', sent: 1200, failed: 3, reason: 'finished' },
    required: ['campaign_id', 'name', 'sent', 'failed', 'reason'],
    wrongType: ['sent', 1.5],
  },
  {
    name: 'journey.enrolled',
    data: { journey_id: 'j_1', contact_id: 'c_1', enrollment_id: 'e_1' },
    required: ['journey_id', 'contact_id', 'enrollment_id'],
    wrongType: ['enrollment_id', null],
  },
  {
    name: 'journey.completed',
    data: { journey_id: 'j_1', contact_id: 'c_1', enrollment_id: 'e_1' },
    required: ['journey_id', 'contact_id', 'enrollment_id'],
    wrongType: ['journey_id', []],
  },
  {
    name: 'contact.unsubscribed',
    data: { contact_id: 'c_1', channel: 'whatsapp', reason: 'keyword' },
    required: ['contact_id', 'reason'],
    wrongType: ['channel', 3],
  },
  {
    name: 'score.rule_fired',
    data: { rule_id: 'r_1', rule_name: 'Opened 3 emails', contact_id: 'c_1', points: 10, score: 42 },
    required: [],
    wrongType: ['points', 'ten'],
  },
];
