/**
 * On Cloudflare Workers (navigator.userAgent 'Cloudflare-Workers') a timer runs only while the
 * request that set it is alive, so a receiver there gives each delivery a timer of its own request,
 * cleared when the delivery ends, instead of one timer for all (src/core/request-timers.ts). Here on
 * Node with fake timers and the Workers marker; in workerd itself by run.mts.
 */
import { createMailReceiver } from '@svc/webhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAIL_SECRET, mailDelivery } from '../adapters/support/deliveries.js';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const request = (delivery = mailDelivery()) =>
  new Request('http://localhost/', { method: 'POST', body: delivery.body, headers: delivery.headers });

function receiver() {
  const waits: Array<() => void> = [];
  const mail = createMailReceiver({ secret: MAIL_SECRET, timeoutMs: 1_000, leaseMs: 30_000 }).onAny(
    (event) => (event.name === 'bounced' ? new Promise<void>((resolve) => waits.push(resolve)) : undefined),
  );
  const finish = () => {
    for (const resolve of waits.splice(0)) resolve();
  };
  return { mail, finish };
}

describe('deadlines on Workers: one timer per delivery, of its own request', () => {
  it('leaves no timer behind a delivery, and arms a fresh one for the next', async () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    vi.useFakeTimers();
    const { mail, finish } = receiver();
    expect((await mail.handle(request())).status).toBe(200);
    // Elsewhere the receiver's one timer stays armed after a delivery (it fires once, for nothing);
    // on Workers it would belong to a request that has ended and never fire.
    expect(vi.getTimerCount()).toBe(0);

    const slow = mail.handle(request(mailDelivery({ event: 'bounced' })));
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await slow).status).toBe(503);
    finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps the timers of each waiting delivery, its deadline and its lease turns, on its own request', async () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    vi.useFakeTimers();
    const { mail, finish } = receiver();
    const first = mail.handle(request(mailDelivery({ event: 'bounced' })));
    await vi.advanceTimersByTimeAsync(400);
    const second = mail.handle(request(mailDelivery({ event: 'bounced' })));
    await vi.advanceTimersByTimeAsync(0);
    // Each delivery: its deadline and its lease turns (core/delivery/lease.ts), two entries.
    expect(vi.getTimerCount()).toBe(4);
    await vi.advanceTimersByTimeAsync(600);
    expect((await first).status).toBe(503);
    await vi.advanceTimersByTimeAsync(400);
    expect((await second).status).toBe(503);
    // Past their deadlines both handlers still run: each keeps the timer of its lease turns.
    expect(vi.getTimerCount()).toBe(2);
    finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('elsewhere, the deliveries share the one timer of the receiver, and one that waits for nothing arms none', async () => {
    vi.useFakeTimers();
    const { mail, finish } = receiver();
    // A handler that returns no promise, on the receiver's own memory store: nothing can outlast its
    // deadline, so no timer is armed (core/delivery/run.ts).
    expect((await mail.handle(request())).status).toBe(200);
    expect(vi.getTimerCount()).toBe(0);
    const first = mail.handle(request(mailDelivery({ event: 'bounced' })));
    const second = mail.handle(request(mailDelivery({ event: 'bounced' })));
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await first).status).toBe(503);
    expect((await second).status).toBe(503);
    finish();
    await vi.advanceTimersByTimeAsync(0);
  });
});
