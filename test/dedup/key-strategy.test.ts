import { createHash } from 'node:crypto';
import type { MailWebhookEvent } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { crmDedupKeyOf } from '../../src/crm/dedup-key.js';
import { dedupKeyOfDeliveryId } from '../../src/dedup/key-strategy.js';
import { isWebhookError } from '../../src/index.js';
import { mailDedupKeyOf } from '../../src/mail/dedup-key.js';

const mailEvent = (name: string, payload: Record<string, unknown>, known = true) =>
  ({ service: 'mail', known, name, deliveryId: 'dlv_1', payload, secretIndex: 0 }) as MailWebhookEvent;

function optionsError(build: () => unknown): string {
  try {
    build();
  } catch (error) {
    if (isWebhookError(error) && error.code === 'options_invalid') return error.message;
    throw error;
  }
  throw new Error('did not throw');
}

describe('dedup key strategies of both services', () => {
  it("'delivery-id' (the default) keys by the service and the delivery id", () => {
    expect(mailDedupKeyOf()(mailEvent('delivered', {}))).toBe('mail:delivery:dlv_1');
    expect(dedupKeyOfDeliveryId('mail', 'dlv_1')).toBe('mail:delivery:dlv_1');
    expect(dedupKeyOfDeliveryId('crm', '5f0c')).toBe('crm:delivery:5f0c');
    const crmEvent = { deliveryId: '5f0c' } as Parameters<ReturnType<typeof crmDedupKeyOf>>[0];
    expect(crmDedupKeyOf('delivery-id')(crmEvent)).toBe('crm:delivery:5f0c');
  });

  it("'message-event' keys an event with a message_id by both (an unknown one too); others fall back to the delivery id", () => {
    const keyOf = mailDedupKeyOf('message-event');
    expect(keyOf(mailEvent('delivered', { message_id: 'm_42' }))).toBe('mail:message:delivered:m_42');
    expect(keyOf(mailEvent('ip_paused', { ip: '192.0.2.1' }))).toBe('mail:delivery:dlv_1');
    expect(keyOf(mailEvent('delivered', { message_id: '' }))).toBe('mail:delivery:dlv_1');
    // An unknown name is keyed the same way (a captured body under invented names: one key per name).
    expect(keyOf(mailEvent('brand_new', { message_id: 'm_42' }, false))).toBe('mail:message:brand_new:m_42');
    expect(keyOf(mailEvent('brand:new', { message_id: 'm_42' }, false))).toBe('mail:delivery:dlv_1');
  });

  it('a long key is replaced by the SHA-256 of the whole key, in the service namespace', () => {
    const messageId = 'm'.repeat(300);
    const whole = `mail:message:delivered:${messageId}`;
    const hex = createHash('sha256').update(whole).digest('hex');
    expect(mailDedupKeyOf('message-event')(mailEvent('delivered', { message_id: messageId }))).toBe(
      `mail:sha256:${hex}`,
    );
  });

  it("a user's function is prefixed, and must return a non-empty string", () => {
    expect(mailDedupKeyOf((event) => `x:${event.deliveryId}`)(mailEvent('delivered', {}))).toBe(
      'mail:x:dlv_1',
    );
    expect(() => crmDedupKeyOf(() => '' as string)({ deliveryId: 'd' } as never)).toThrow(
      'the dedupKey function returned string, not a non-empty string',
    );
    expect(() => mailDedupKeyOf(() => 42 as unknown as string)(mailEvent('delivered', {}))).toThrow(
      'the dedupKey function returned number, not a non-empty string',
    );
  });

  it('an unknown strategy name is options_invalid, listing the names this service has', () => {
    expect(optionsError(() => mailDedupKeyOf('message-id' as never))).toBe(
      "dedupKey must be 'delivery-id', 'message-event' or a function (got message-id).",
    );
    expect(optionsError(() => crmDedupKeyOf('message-event' as never))).toBe(
      "dedupKey must be 'delivery-id' or a function (got message-event).",
    );
    // Only a service's own names: nothing inherited from Object.prototype is a strategy.
    expect(optionsError(() => mailDedupKeyOf('toString' as never))).toContain('(got toString)');
  });
});
