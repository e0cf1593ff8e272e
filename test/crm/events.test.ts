import { crmDataSchemas, crmEnvelopeSchema, crmEnvelopeSchemas } from '@svc/webhooks/schemas';
import { describe, expect, it } from 'vitest';
import {
  CRM_EVENT_NAMES,
  constructCrmEvent,
  isCrmEventName,
  isWebhookError,
  rawFields,
  type WebhookError,
} from '../../src/index.js';
import { CRM_CASES, crmHeaders, DELIVERY_ID, envelope, SECRET } from './fixtures.js';

async function construct(name: string, data: unknown) {
  const body = JSON.stringify(envelope(name, data));
  return constructCrmEvent(body, crmHeaders(body, name), SECRET);
}

async function rejection(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

describe('crm event names', () => {
  it('lists the 13 events of crm-service §6, each once', () => {
    expect(CRM_EVENT_NAMES).toHaveLength(13);
    expect(new Set(CRM_EVENT_NAMES).size).toBe(13);
    expect(Object.keys(crmDataSchemas).sort()).toEqual([...CRM_EVENT_NAMES].sort());
    expect(Object.keys(crmEnvelopeSchemas).sort()).toEqual([...CRM_EVENT_NAMES].sort());
    expect(CRM_CASES.map((c) => c.name).sort()).toEqual([...CRM_EVENT_NAMES].sort());
  });

  it('guards names', () => {
    expect(isCrmEventName('deal.won')).toBe(true);
    expect(isCrmEventName('deal.WON')).toBe(false);
    expect(isCrmEventName('hasOwnProperty')).toBe(false);
    expect(isCrmEventName(null)).toBe(false);
  });
});

describe.each(CRM_CASES)('crm event $name', ({ name, data, required, wrongType }) => {
  it('accepts a valid sample', async () => {
    const event = await construct(name, data);
    expect(event).toEqual({
      service: 'crm',
      known: true,
      name,
      deliveryId: DELIVERY_ID,
      tenantId: 'tenant_1',
      timestamp: '2024-05-01T10:00:00.000Z',
      data,
      envelope: envelope(name, data),
      secretIndex: 0,
    });
  });

  it('keeps unknown extra fields in data and in the envelope', async () => {
    const body = JSON.stringify(envelope(name, { ...data, added_later: [1] }, { api_version: '2024-05' }));
    const event = await constructCrmEvent(body, crmHeaders(body, name), SECRET);
    expect(event.data).toMatchObject({ added_later: [1] });
    expect(event.envelope).toMatchObject({ api_version: '2024-05' });
    // The typed way to reach them: the same objects, not copies.
    expect(rawFields(event.data as object).added_later).toEqual([1]);
    expect(rawFields(event.envelope).api_version).toBe('2024-05');
    expect(rawFields(event.envelope)).toBe(event.envelope);
  });

  it.each(required.length > 0 ? required : ['(none)'])('refuses data without %s', async (field) => {
    if (field === '(none)') {
      // score.rule_fired: every field name is our guess, so an empty object passes.
      expect((await construct(name, {})).known).toBe(true);
      return;
    }
    const { [field]: _removed, ...rest } = data;
    const error = await rejection(construct(name, rest));
    expect([error.code, error.status]).toEqual(['invalid_payload', 400]);
    expect(error.message).toContain(`data.${field}`);
  });

  it(`refuses a wrong type for ${wrongType[0]}`, async () => {
    const [field, value] = wrongType;
    const error = await rejection(construct(name, { ...data, [field]: value }));
    expect(error.code).toBe('invalid_payload');
    expect(error.message).toContain(`data.${field}`);
  });

  it('refuses a data that is not an object', async () => {
    const error = await rejection(construct(name, 'text'));
    expect(error.code).toBe('invalid_payload');
  });

  it('validates with the discriminated union too', () => {
    expect(crmEnvelopeSchema.safeParse(envelope(name, data)).success).toBe(true);
    expect(
      crmEnvelopeSchema.safeParse(envelope(name, { ...data, [wrongType[0]]: wrongType[1] })).success,
    ).toBe(false);
  });
});

describe('crm data rules', () => {
  it('accepts null where a value may be absent', async () => {
    expect(
      (await construct('contact.created', { id: 'c', email: null, first_name: null, tags: [] })).known,
    ).toBe(true);
    const deal = { deal_id: 'd', title: 'T', value: null, stage_id: 's', contact_id: null };
    expect((await construct('deal.created', deal)).known).toBe(true);
  });

  it('accepts channel and reason values beyond the known ones, and a missing channel', async () => {
    const event = await construct('contact.unsubscribed', { contact_id: 'c', reason: 'erasure' });
    expect(event.data).toEqual({ contact_id: 'c', reason: 'erasure' });
    const other = await construct('contact.unsubscribed', {
      contact_id: 'c',
      channel: 'telegram',
      reason: 'STOP',
    });
    expect(other.known).toBe(true);
    const campaign = { campaign_id: 'cp', name: 'n', sent: 0, failed: 0, reason: 'budget_exhausted' };
    expect((await construct('campaign.completed', campaign)).known).toBe(true);
  });

  it('accepts contact.updated fields as an object or a list of names', async () => {
    expect((await construct('contact.updated', { id: 'c', fields: ['email', 'tags'] })).known).toBe(true);
  });

  it('refuses negative campaign counts', async () => {
    const error = await rejection(
      construct('campaign.completed', {
        campaign_id: 'cp',
        name: 'n',
        sent: -1,
        failed: 0,
        reason: 'manual',
      }),
    );
    expect(error.message).toContain('data.sent');
  });
});
