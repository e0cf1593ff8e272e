import { createHmac } from 'node:crypto';
import {
  CRM_EVENT_NAMES,
  createCrmReceiver,
  createMailReceiver,
  MAIL_EVENT_NAMES,
  type MailPayloadOf,
} from '@svc/webhooks';
import { crmEnvelopeSchemas, mailPayloadSchemas } from '@svc/webhooks/schemas';
import { describe, expect, it } from 'vitest';
import {
  createFixtures,
  createSignedRequest,
  crmData,
  mailPayload,
  type Overrides,
} from '../../src/testing/index.js';

const hmac = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('fixtures', () => {
  it.each(MAIL_EVENT_NAMES)('mail %s is valid against the library schema', (event) => {
    const payload = createFixtures({ seed: event }).mail(event);
    expect(mailPayloadSchemas[event].safeParse(payload).success).toBe(true);
    expect(payload.event).toBe(event);
  });

  it.each(CRM_EVENT_NAMES)('crm %s envelope is valid against the library schema', (event) => {
    const envelope = createFixtures({ seed: event }).crmEnvelope(event);
    expect(crmEnvelopeSchemas[event].safeParse(envelope).success).toBe(true);
    expect(envelope.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('is deterministic for a seed and varies without one', () => {
    const a = createFixtures({ seed: 7, now: () => 0 });
    const b = createFixtures({ seed: 7, now: () => 0 });
    expect([a.mail('bounced'), a.crm('deal.won')]).toEqual([b.mail('bounced'), b.crm('deal.won')]);
    expect(a.mail('bounced').message_id).not.toBe(a.mail('bounced').message_id);
    expect(mailPayload('delivered').message_id).not.toBe(mailPayload('delivered').message_id);
    expect(crmData('deal.won', undefined, { seed: 1 })).toEqual(crmData('deal.won', undefined, { seed: 1 }));
  });

  it('applies overrides, and undefined removes a field', () => {
    // A field the types do not know is passed with a cast (overrides are exact: test/testing/overrides.test-d.ts).
    const payload = mailPayload('clicked', {
      url: 'https://example.com/x',
      extra: 1,
      timestamp: undefined,
    } as Overrides<MailPayloadOf<'clicked'>>);
    expect(payload.url).toBe('https://example.com/x');
    expect(payload).toHaveProperty('extra', 1);
    expect(payload).not.toHaveProperty('timestamp');
    expect(mailPayloadSchemas.clicked.safeParse(payload).success).toBe(false);
    expect(crmData('deal.won', { value: 5 }).value).toBe(5);
  });
});

describe('createSignedRequest', () => {
  it('builds an email delivery signed over the exact body bytes', async () => {
    const request = await createSignedRequest({
      service: 'mail',
      event: 'bounced',
      payload: { to: 'ana@example.com' },
      secret: 'whsec_fixture_test_secret',
      deliveryId: 'd_1',
    });
    const body = await request.clone().text();
    expect(request.method).toBe('POST');
    expect(request.headers.get('X-SvcMAIL-Sig')).toBe(hmac('whsec_fixture_test_secret', body));
    expect(request.headers.get('X-SvcMAIL-Event')).toBe('bounced');
    expect(request.headers.get('X-SvcMAIL-Id')).toBe('d_1');
    expect(JSON.parse(body)).toMatchObject({ event: 'bounced', to: 'ana@example.com' });

    const seen: string[] = [];
    const receiver = createMailReceiver({ secret: 'whsec_fixture_test_secret' }).on('bounced', (event) => {
      seen.push(event.payload.to);
    });
    expect((await receiver.handle(request)).status).toBe(200);
    expect(seen).toEqual(['ana@example.com']);
  });

  it('builds a CRM delivery whose envelope id is X-Svc-Delivery, with the CRM headers', async () => {
    const request = await createSignedRequest({
      service: 'crm',
      event: 'deal.won',
      data: { value: 10 },
      secret: 's3cret-crm-fixture-key',
    });
    const body = await request.clone().text();
    const envelope = JSON.parse(body);
    expect(Object.keys(envelope)).toEqual(['id', 'event', 'timestamp', 'tenant_id', 'data']);
    expect(request.headers.get('X-Svc-Delivery')).toBe(envelope.id);
    expect(request.headers.get('X-Svc-Signature')).toBe(hmac('s3cret-crm-fixture-key', body));
    expect(request.headers.get('User-Agent')).toBe('Svc-CRM-Webhook/1.0');
    expect(request.headers.get('Content-Type')).toBe('application/json');
    const receiver = createCrmReceiver({ secret: 's3cret-crm-fixture-key' });
    expect((await receiver.handle(request)).status).toBe(200);
  });

  it('can forge what a test needs: wrong signature, dropped header, renamed vendor, raw body', async () => {
    const forged = await createSignedRequest({
      service: 'mail',
      event: 'opened',
      secret: 'whsec_forging_secret_a',
      signature: 'sha256=00',
    });
    expect(forged.headers.get('X-SvcMAIL-Sig')).toBe('sha256=00');
    const noId = await createSignedRequest({
      service: 'mail',
      event: 'opened',
      secret: 'whsec_forging_secret_a',
      headers: { 'X-SvcMAIL-Id': null },
    });
    expect(noId.headers.has('X-SvcMAIL-Id')).toBe(false);
    const acme = await createSignedRequest({
      service: 'crm',
      event: 'deal.lost',
      secret: 'whsec_forging_secret_a',
      vendor: 'Acme',
    });
    expect(acme.headers.get('User-Agent')).toBe('Acme-CRM-Webhook/1.0');
    expect(acme.headers.has('X-Acme-Signature')).toBe(true);
    const raw = await createSignedRequest({
      service: 'mail',
      event: 'opened',
      secret: 'whsec_raw_body_secret_k',
      body: 'not json',
    });
    expect(await raw.clone().text()).toBe('not json');
    expect(raw.headers.get('X-SvcMAIL-Sig')).toBe(hmac('whsec_raw_body_secret_k', 'not json'));
    expect((await createMailReceiver({ secret: 'whsec_other_receiver_b' }).handle(forged)).status).toBe(401);
  });
});
