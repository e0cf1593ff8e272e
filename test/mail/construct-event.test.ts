import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { constructMailEvent, isWebhookError, type WebhookError } from '../../src/index.js';
import { parseMailEvent } from '../../src/mail/parse-event.js';
import { mailHeaders, SECRET, sign } from './fixtures.js';

const payload = {
  event: 'opened',
  client_id: 'c1',
  message_id: 'm1',
  to: 'ana@example.com',
  timestamp: '2024-05-01T10:00:00.000Z',
};
const body = JSON.stringify(payload);

async function rejection(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

function signed(text: string, headers: Record<string, string | string[]> = {}) {
  return { 'x-svcmail-sig': sign(text), 'x-svcmail-id': 'dlv_1', 'x-svcmail-event': 'opened', ...headers };
}

describe('constructMailEvent signature errors (checked before anything else)', () => {
  it.each([
    ['signature_missing', {}],
    ['signature_header_repeated', { 'x-svcmail-sig': [sign(body), sign(body)] }],
    ['signature_malformed', { 'x-svcmail-sig': sign(body).toUpperCase() }],
    ['signature_mismatch', { 'x-svcmail-sig': sign(body, 'another secret') }],
  ] as const)('%s -> 401', async (code, headers) => {
    const { 'x-svcmail-sig': _sig, ...rest } = mailHeaders(body, 'opened');
    const error = await rejection(constructMailEvent(body, { ...rest, ...headers }, SECRET));
    expect(error.code).toBe(code);
    expect(error.status).toBe(401);
  });

  it('secret_invalid -> 500, without printing the secret', async () => {
    const error = await rejection(constructMailEvent(body, mailHeaders(body, 'opened'), ' padded-secret\n'));
    expect([error.code, error.status]).toEqual(['secret_invalid', 500]);
    expect(error.message).not.toContain('padded-secret');
  });

  it('verifies the bytes before parsing: invalid JSON with a bad signature is a signature error', async () => {
    const error = await rejection(
      constructMailEvent('{not json', { 'x-svcmail-sig': sign('other') }, SECRET),
    );
    expect(error.code).toBe('signature_mismatch');
  });

  it('verifies the exact bytes: re-serialised JSON does not verify', async () => {
    const spaced = JSON.stringify(payload, null, 2);
    const error = await rejection(constructMailEvent(JSON.stringify(payload), signed(spaced), SECRET));
    expect(error.code).toBe('signature_mismatch');
  });

  it('refuses a parsed object with body_not_raw', async () => {
    const error = await rejection(constructMailEvent(payload as never, signed(body), SECRET));
    expect([error.code, error.status]).toEqual(['body_not_raw', 500]);
  });

  it('reports which secret matched during a rotation', async () => {
    const event = await constructMailEvent(body, mailHeaders(body, 'opened', 'd', 'old-secret-0123456789'), [
      'new-secret-0123456789',
      'old-secret-0123456789',
    ]);
    expect(event.secretIndex).toBe(1);
  });

  it('accepts Uint8Array, Buffer, ArrayBuffer and string bodies', async () => {
    const bytes = new TextEncoder().encode(body);
    for (const raw of [bytes, Buffer.from(body), bytes.slice().buffer, body]) {
      expect((await constructMailEvent(raw, signed(body), SECRET)).name).toBe('opened');
    }
  });
});

describe('constructMailEvent body errors', () => {
  it.each([
    ['empty body', ''],
    ['not JSON', '{"event":'],
    ['an array', '[]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"opened"'],
  ])('invalid_json 400 for %s', async (_label, text) => {
    const error = await rejection(constructMailEvent(text, signed(text), SECRET));
    expect([error.code, error.status]).toEqual(['invalid_json', 400]);
  });

  it('invalid_json for bytes that are not UTF-8', async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]);
    const error = await rejection(
      constructMailEvent(bytes, { ...signed(''), 'x-svcmail-sig': sign(bytes) }, SECRET),
    );
    expect(error.code).toBe('invalid_json');
  });

  it('accepts a UTF-8 BOM before the JSON', async () => {
    const text = `\uFEFF${body}`;
    expect((await constructMailEvent(text, signed(text), SECRET)).known).toBe(true);
  });

  it('invalid_payload carries the zod error as cause and names paths only', async () => {
    const text = JSON.stringify({ ...payload, to: 'no-at-sign', message_id: 5 });
    const error = await rejection(constructMailEvent(text, signed(text), SECRET));
    expect([error.code, error.status]).toEqual(['invalid_payload', 400]);
    expect(error.cause).toBeInstanceOf(z.ZodError);
    expect(error.message).toContain('message_id');
    expect(error.message).toContain('to');
    expect(error.message).not.toContain('no-at-sign');
  });
});

describe('constructMailEvent event name and delivery id (email-service §6)', () => {
  it('takes the name from X-SvcMAIL-Event when the body has none', async () => {
    const { event: _e, ...noEvent } = payload;
    const text = JSON.stringify(noEvent);
    const event = await constructMailEvent(text, signed(text), SECRET);
    expect(event).toMatchObject({ known: true, name: 'opened', deliveryId: 'dlv_1' });
  });

  it("uses the body's event when the header is absent", async () => {
    const { 'x-svcmail-event': _e, ...headers } = signed(body);
    expect((await constructMailEvent(body, headers, SECRET)).name).toBe('opened');
  });

  it('event_mismatch 400 when header and body disagree', async () => {
    const error = await rejection(
      constructMailEvent(body, signed(body, { 'x-svcmail-event': 'clicked' }), SECRET),
    );
    expect([error.code, error.status]).toEqual(['event_mismatch', 400]);
  });

  it('event_missing 400 when neither names the event', async () => {
    const text = JSON.stringify({ client_id: 'c1' });
    const { 'x-svcmail-event': _e, ...headers } = signed(text);
    const error = await rejection(constructMailEvent(text, headers, SECRET));
    expect([error.code, error.status]).toEqual(['event_missing', 400]);
  });

  it('event_missing for an empty event header and no body event', async () => {
    const text = JSON.stringify({ client_id: 'c1' });
    const error = await rejection(constructMailEvent(text, signed(text, { 'x-svcmail-event': '' }), SECRET));
    expect(error.code).toBe('event_missing');
  });

  it('delivery_id_missing 400 without X-SvcMAIL-Id', async () => {
    const { 'x-svcmail-id': _id, ...headers } = signed(body);
    const error = await rejection(constructMailEvent(body, headers, SECRET));
    expect([error.code, error.status]).toEqual(['delivery_id_missing', 400]);
  });

  it('an unknown event name is known:false with the raw payload, never an error', async () => {
    const raw = { event: 'list_cleaned', client_id: 'c1', list: { removed: 3 } };
    const text = JSON.stringify(raw);
    const event = await constructMailEvent(text, signed(text, { 'x-svcmail-event': 'list_cleaned' }), SECRET);
    expect(event).toEqual({
      service: 'mail',
      known: false,
      name: 'list_cleaned',
      deliveryId: 'dlv_1',
      payload: raw,
      secretIndex: 0,
    });
  });

  it('an unknown name from the header alone is known:false too', async () => {
    const text = '{"whatever":true}';
    const event = await constructMailEvent(text, signed(text, { 'x-svcmail-event': 'future_event' }), SECRET);
    expect(event).toMatchObject({ known: false, name: 'future_event', payload: { whatever: true } });
  });

  it('does not treat Object.prototype names as known events', async () => {
    const text = '{"client_id":"c1"}';
    const event = await constructMailEvent(text, signed(text, { 'x-svcmail-event': 'constructor' }), SECRET);
    expect(event.known).toBe(false);
  });
});

describe('parseMailEvent (already verified)', () => {
  it('parses without a signature and carries the given secretIndex', () => {
    const event = parseMailEvent(body, { 'x-svcmail-id': 'dlv_9' }, { secretIndex: 2 });
    expect(event).toMatchObject({ known: true, name: 'opened', deliveryId: 'dlv_9', secretIndex: 2 });
  });

  it('throws the same WebhookErrors synchronously', () => {
    expect(() => parseMailEvent('[]', {}, { secretIndex: 0 })).toThrowError(
      expect.objectContaining({ code: 'invalid_json' }),
    );
  });
});
