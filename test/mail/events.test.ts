import { mailEventSchema, mailPayloadSchemas } from '@svc/webhooks/schemas';
import { describe, expect, it } from 'vitest';
import {
  constructMailEvent,
  isMailEventName,
  isWebhookError,
  MAIL_EVENT_NAMES,
  rawFields,
  type WebhookError,
} from '../../src/index.js';
import { MAIL_CASES, mailHeaders, SECRET } from './fixtures.js';

async function construct(payload: Record<string, unknown>, name: string) {
  const body = JSON.stringify(payload);
  return constructMailEvent(body, mailHeaders(body, name), SECRET);
}

async function rejection(promise: Promise<unknown>): Promise<WebhookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isWebhookError(error)) throw new Error(`expected a WebhookError, got ${String(error)}`);
  return error;
}

describe('mail event names', () => {
  it('lists the 13 events of email-service §6, each once', () => {
    expect(MAIL_EVENT_NAMES).toHaveLength(13);
    expect(new Set(MAIL_EVENT_NAMES).size).toBe(13);
    expect(Object.keys(mailPayloadSchemas).sort()).toEqual([...MAIL_EVENT_NAMES].sort());
    expect(MAIL_CASES.map((c) => c.name).sort()).toEqual([...MAIL_EVENT_NAMES].sort());
  });

  it('guards names', () => {
    expect(isMailEventName('bounced')).toBe(true);
    expect(isMailEventName('Bounced')).toBe(false);
    expect(isMailEventName('toString')).toBe(false);
    expect(isMailEventName(7)).toBe(false);
  });
});

describe.each(MAIL_CASES)('mail event $name', ({ name, sample, required, wrongType }) => {
  it('accepts a valid sample', async () => {
    const event = await construct(sample, name);
    expect(event).toEqual({
      service: 'mail',
      known: true,
      name,
      deliveryId: 'dlv_123',
      payload: sample,
      secretIndex: 0,
    });
  });

  it('keeps unknown extra fields', async () => {
    const event = await construct({ ...sample, added_later: { nested: [1, 2] } }, name);
    expect(event.payload).toMatchObject({ added_later: { nested: [1, 2] } });
    // The typed way to reach them: the same object, not a copy.
    if (!event.known) throw new Error('expected a known event');
    expect(rawFields(event.payload)).toBe(event.payload);
    expect(rawFields(event.payload).added_later).toEqual({ nested: [1, 2] });
  });

  it.each(required)('refuses a payload without %s', async (field) => {
    const { [field]: _removed, ...rest } = sample;
    const error = await rejection(construct(rest, name));
    expect(error.code).toBe('invalid_payload');
    expect(error.status).toBe(400);
    expect(error.message).toContain(field);
  });

  it(`refuses a wrong type for ${wrongType[0]}`, async () => {
    const [field, value] = wrongType;
    const error = await rejection(construct({ ...sample, [field]: value }, name));
    expect(error.code).toBe('invalid_payload');
    expect(error.message).toContain(field);
  });

  it('validates with the discriminated union too', () => {
    expect(mailEventSchema.safeParse({ name, payload: sample }).success).toBe(true);
    expect(mailEventSchema.safeParse({ name, payload: { ...sample, client_id: 1 } }).success).toBe(false);
  });
});

describe('mail payload rules', () => {
  const bounced = MAIL_CASES.find((c) => c.name === 'bounced')!.sample;

  it('keeps from, response and latency_ms optional (they depend on origin)', async () => {
    const { from: _f, response: _r, latency_ms: _l, timestamp: _t, ...minimal } = bounced;
    const event = await construct(minimal, 'bounced');
    expect(event.known).toBe(true);
  });

  it('requires an ISO 8601 UTC timestamp where the spec lists one', async () => {
    const opened = MAIL_CASES.find((c) => c.name === 'opened')!.sample;
    for (const timestamp of ['yesterday', '2024-05-01 10:00:00', '2024-05-01T10:00:00+02:00']) {
      const error = await rejection(construct({ ...opened, timestamp }, 'opened'));
      expect(error.code).toBe('invalid_payload');
    }
    // Any fractional precision is accepted, as long as it is UTC.
    expect((await construct({ ...opened, timestamp: '2024-05-01T10:00:00Z' }, 'opened')).known).toBe(true);
  });

  it('refuses a recipient that is not an address', async () => {
    const error = await rejection(construct({ ...bounced, to: 'nobody' }, 'bounced'));
    expect(error.message).toContain('to');
  });

  it('does not require provider for blocked (the message never left)', async () => {
    const blocked = MAIL_CASES.find((c) => c.name === 'blocked')!.sample;
    const event = await construct({ ...blocked, provider: 'outlook' }, 'blocked');
    expect(event.payload).toMatchObject({ provider: 'outlook' });
  });

  it('never puts payload values into the error message', async () => {
    const error = await rejection(
      construct({ ...bounced, to: 'secret-person-at-example', latency_ms: 'slow' }, 'bounced'),
    );
    expect(error.message).not.toContain('secret-person');
    expect(error.message).not.toContain('slow');
    expect(error.message).toMatch(/to .*latency_ms|latency_ms .*to/);
  });
});
