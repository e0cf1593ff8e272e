import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseCrmEvent } from '../../src/crm/parse-event.js';
import { constructCrmEvent, isWebhookError, type WebhookError } from '../../src/index.js';
import { crmHeaders, DELIVERY_ID, envelope, SECRET, sign } from './fixtures.js';

const data = { deal_id: 'd_1', title: 'Big deal', value: 10 };
const body = JSON.stringify(envelope('deal.won', data));

async function rejection(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

async function codeOf(text: string, headers: Record<string, string | readonly string[] | undefined>) {
  const error = await rejection(constructCrmEvent(text, headers, SECRET));
  return [error.code, error.status];
}

describe('constructCrmEvent signature errors (crm-service §6 rule 2)', () => {
  it.each([
    ['signature_missing', undefined],
    ['signature_header_repeated', [sign(body), sign(body)]],
    ['signature_malformed', sign(body).replace('sha256=', 'sha1=')],
    ['signature_mismatch', sign(`${body} `)],
  ] as const)('%s -> 401', async (code, signature) => {
    expect(await codeOf(body, { ...crmHeaders(body, 'deal.won'), 'x-svc-signature': signature })).toEqual([
      code,
      401,
    ]);
  });

  it('secret_invalid -> 500', async () => {
    const error = await rejection(constructCrmEvent(body, crmHeaders(body), ''));
    expect([error.code, error.status]).toEqual(['secret_invalid', 500]);
  });

  it('checks the signature before the JSON', async () => {
    expect(await codeOf('nope', { 'x-svc-signature': sign('other') })).toEqual(['signature_mismatch', 401]);
  });

  it('reports the matching secret index', async () => {
    const event = await constructCrmEvent(body, crmHeaders(body), ['rotated-new-0123456789', SECRET]);
    expect(event.secretIndex).toBe(1);
  });
});

describe('constructCrmEvent body errors', () => {
  it.each(['', '{', '[]', 'null', 'true', '"deal.won"'])('invalid_json 400 for %j', async (text) => {
    expect(await codeOf(text, crmHeaders(text))).toEqual(['invalid_json', 400]);
  });

  it('event_missing 400 without a body event (the header alone is not enough, §6 rule 1)', async () => {
    const { event: _e, ...rest } = envelope('deal.won', data);
    const text = JSON.stringify(rest);
    expect(await codeOf(text, crmHeaders(text, 'deal.won'))).toEqual(['event_missing', 400]);
    const numeric = JSON.stringify({ ...rest, event: 5 });
    expect(await codeOf(numeric, crmHeaders(numeric))).toEqual(['event_missing', 400]);
  });

  it('event_mismatch 400 when X-Svc-Event differs from the body', async () => {
    expect(await codeOf(body, crmHeaders(body, 'deal.lost'))).toEqual(['event_mismatch', 400]);
  });

  it('delivery_id_missing 400 without a body id', async () => {
    const { id: _id, ...rest } = envelope('deal.won', data);
    const text = JSON.stringify(rest);
    expect(await codeOf(text, crmHeaders(text))).toEqual(['delivery_id_missing', 400]);
  });

  it('delivery_id_mismatch 400 when X-Svc-Delivery differs from the body id', async () => {
    const other = '9b2f6f55-0c1e-4a51-9d0a-3f0f1b5b2c11';
    expect(await codeOf(body, crmHeaders(body, 'deal.won', other))).toEqual(['delivery_id_mismatch', 400]);
  });

  it('uses the body id when X-Svc-Delivery is absent', async () => {
    const event = await constructCrmEvent(body, crmHeaders(body, undefined, undefined), SECRET);
    expect(event.deliveryId).toBe(DELIVERY_ID);
  });

  it.each(['not-a-uuid', 'x'.repeat(15_000), '5f0c9a4e-2b7d-4c1a-9e3f-8a6b1c2d3e4f '])(
    'delivery_id_invalid 400 for a body id that is not a UUID (%#)',
    async (id) => {
      const text = JSON.stringify({ ...envelope('deal.won', data), id });
      const error = await rejection(constructCrmEvent(text, crmHeaders(text, 'deal.won', undefined), SECRET));
      expect([error.code, error.status]).toEqual(['delivery_id_invalid', 400]);
      expect(error.message.length).toBeLessThan(200);
    },
  );

  it.each([
    ['timestamp', '2024-05-01'],
    ['tenant_id', 7],
  ])('invalid_payload for an envelope %s of the wrong form', async (field, value) => {
    const text = JSON.stringify({ ...envelope('deal.won', data), [field]: value });
    const headers = crmHeaders(text, 'deal.won', DELIVERY_ID);
    const error = await rejection(constructCrmEvent(text, headers, SECRET));
    expect([error.code, error.status]).toEqual(['invalid_payload', 400]);
    expect(error.cause).toBeInstanceOf(z.ZodError);
    expect(error.message).toContain(field);
    expect(error.message).not.toContain(String(value));
  });
});

describe('unknown CRM events', () => {
  it('are known:false with the envelope validated and data as sent', async () => {
    const raw = envelope('invoice.paid', { invoice_id: 'i_1', amount: 99 });
    const text = JSON.stringify(raw);
    const event = await constructCrmEvent(text, crmHeaders(text, 'invoice.paid'), SECRET);
    expect(event).toEqual({
      service: 'crm',
      known: false,
      name: 'invoice.paid',
      deliveryId: DELIVERY_ID,
      tenantId: 'tenant_1',
      timestamp: raw.timestamp,
      data: raw.data,
      envelope: raw,
      secretIndex: 0,
    });
  });

  it('still refuse a broken envelope', async () => {
    const text = JSON.stringify({ ...envelope('invoice.paid', {}), tenant_id: undefined });
    expect(await codeOf(text, crmHeaders(text))).toEqual(['invalid_payload', 400]);
  });
});

describe('CRM headers', () => {
  it('reads web Headers and renamed headers', async () => {
    const headers = new Headers({
      'X-Acme-Signature': sign(body),
      'X-Acme-Event': 'deal.won',
      'X-Acme-Delivery': DELIVERY_ID,
    });
    const headerNames = {
      signature: 'X-Acme-Signature',
      event: 'X-Acme-Event',
      deliveryId: 'X-Acme-Delivery',
    };
    const event = await constructCrmEvent(body, headers, SECRET, { headerNames });
    expect(event.name).toBe('deal.won');
    const mismatch = new Headers({ 'X-Acme-Signature': sign(body), 'X-Acme-Event': 'deal.lost' });
    const error = await rejection(constructCrmEvent(body, mismatch, SECRET, { headerNames }));
    expect(error.code).toBe('event_mismatch');
  });

  it('reads the literal default names from web Headers', async () => {
    const headers = new Headers({
      'X-Svc-Signature': sign(body),
      'X-Svc-Event': 'deal.won',
      'X-Svc-Delivery': DELIVERY_ID,
    });
    expect((await constructCrmEvent(body, headers, SECRET)).known).toBe(true);
  });
});

describe('parseCrmEvent (already verified)', () => {
  it('parses without a signature header', () => {
    expect(parseCrmEvent(body, {}, { secretIndex: 3 })).toMatchObject({ name: 'deal.won', secretIndex: 3 });
  });
});
