/**
 * Untrusted values in logs: a sender chooses the id and event headers, never the size of a log line.
 */
import { createCrmReceiver, createMailReceiver, type LogEntry } from '@svc/webhooks';
import { describe, expect, it } from 'vitest';
import { truncateUntrusted } from '../../src/core/untrusted.js';
import { CRM_SECRET, crmDelivery, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';

const HUGE = 'i'.repeat(15_000);
// 128 kept characters, the marker, and the fixed words of an entry: far below the 15 KB sent.
const MAX_LINE = 1_000;

function logged() {
  const entries: LogEntry[] = [];
  return { entries, logger: (entry: LogEntry) => void entries.push(entry) };
}

function expectBounded(entries: readonly LogEntry[]) {
  expect(entries.length).toBeGreaterThan(0);
  for (const entry of entries) expect(JSON.stringify(entry).length).toBeLessThan(MAX_LINE);
}

describe('truncateUntrusted', () => {
  it('keeps 128 characters and says how many were left out', () => {
    expect(truncateUntrusted(HUGE)).toBe(`${'i'.repeat(128)}…(+14872 chars)`);
    expect(truncateUntrusted('dlv_1')).toBe('dlv_1');
    expect(truncateUntrusted('x'.repeat(128))).toBe('x'.repeat(128));
    expect(truncateUntrusted(undefined)).toBeUndefined();
  });

  it('never splits a surrogate pair', () => {
    const value = `${'a'.repeat(127)}😀${'b'.repeat(10)}`;
    const cut = truncateUntrusted(value);
    expect(cut.startsWith(`${'a'.repeat(127)}…`)).toBe(true);
    expect(cut).toContain('(+12 chars)');
    // No lone high surrogate before the marker.
    expect(cut.slice(0, 128)).toBe(`${'a'.repeat(127)}…`);
  });
});

describe('a 15 KB id or event header gives a bounded log line', () => {
  it('mail: a forged request (signature rejected, warn)', async () => {
    const { entries, logger } = logged();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, logger }).on('delivered', () => {});
    const delivery = mailDelivery('delivered', { deliveryId: HUGE, secret: 'whsec_someone_else' });
    expect((await deliver(receiver, delivery)).status).toBe(401);
    expectBounded(entries);
    expect(entries[0]?.fields.deliveryId).toBe(truncateUntrusted(HUGE));
  });

  it('mail: a signed body under a 15 KB id header (400 delivery_id_invalid, warn)', async () => {
    const { entries, logger } = logged();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, logger }).on('delivered', () => {});
    const outcome = await deliver(receiver, mailDelivery('delivered', { deliveryId: HUGE }));
    expect(outcome).toMatchObject({ status: 400, code: 'delivery_id_invalid' });
    expect(String(outcome.body).length).toBeLessThan(MAX_LINE);
    expectBounded(entries);
  });

  it('mail: a signed body relabelled with a 15 KB event name (unknown event, logged by the handler)', async () => {
    const { entries, logger } = logged();
    const receiver = createMailReceiver({ secret: MAIL_SECRET, logger }).onUnknown((_event, { log }) =>
      log.info('unknown event'),
    );
    const delivery = mailDelivery('delivered', { payload: { client_id: 'c_1' } });
    delivery.headers['x-svcmail-event'] = HUGE;
    expect((await deliver(receiver, delivery)).kind).toBe('handled');
    expectBounded(entries);
    expect(entries.some((entry) => entry.fields.event === truncateUntrusted(HUGE))).toBe(true);
  });

  it('crm: a 15 KB X-Svc-Delivery and X-Svc-Event (400, warn)', async () => {
    const { entries, logger } = logged();
    const receiver = createCrmReceiver({ secret: CRM_SECRET, logger }).on('deal.won', () => {});
    const delivery = crmDelivery('deal.won', { headerDeliveryId: HUGE });
    delivery.headers['x-svc-event'] = HUGE;
    expect((await deliver(receiver, delivery)).status).toBe(400);
    expectBounded(entries);
  });
});
