import { describe, expect, it } from 'vitest';
import { DeliveryContext } from '../../src/core/delivery/context.js';
import type { Clock } from '../../src/shared/clock.js';
import { isWebhookError } from '../../src/shared/errors.js';

// The context listens to the request's signal only once a handler reads `signal`: these pin down that
// the handler's signal tells the same story whenever it is first read.
function contextOf(upstream: AbortSignal | undefined, clock: Clock = { now: () => 1_000 }) {
  return new DeliveryContext({
    clock,
    at: 10_000,
    service: 'mail',
    event: { name: 'delivered', deliveryId: 'd_1' },
    dedupKey: 'mail:delivery:d_1',
    upstream: { signal: upstream },
    logger: undefined,
  });
}

describe('DeliveryContext', () => {
  it('is aborted from the start when the request was aborted before it was built', () => {
    const upstream = new AbortController();
    upstream.abort(new Error('gone'));
    const context = contextOf(upstream.signal);
    expect(context.signal.aborted).toBe(true);
    expect(String(context.signal.reason)).toContain('gone');
  });

  it('follows an abort of the request whether the signal was read before or after it', () => {
    const early = new AbortController();
    const read = contextOf(early.signal);
    const { signal } = read;
    early.abort(new Error('early reader'));
    expect(signal.aborted).toBe(true);
    expect(String(signal.reason)).toContain('early reader');

    const late = new AbortController();
    const unread = contextOf(late.signal);
    late.abort(new Error('late reader'));
    expect(unread.signal.aborted).toBe(true);
    expect(String(unread.signal.reason)).toContain('late reader');
  });

  it('keeps the first reason: the request abort before the deadline wins, and the other way round', () => {
    const upstream = new AbortController();
    const disconnectedFirst = contextOf(upstream.signal);
    upstream.abort(new Error('disconnected'));
    disconnectedFirst.expire();
    expect(String(disconnectedFirst.signal.reason)).toContain('disconnected');

    const later = new AbortController();
    const expiredFirst = contextOf(later.signal);
    expiredFirst.expire();
    later.abort(new Error('disconnected'));
    const reason = expiredFirst.signal.reason;
    expect(isWebhookError(reason) && reason.code).toBe('handler_timeout');
  });

  it('after dispose, reflects the aborts that came before it and none after', () => {
    const before = new AbortController();
    const abortedBefore = contextOf(before.signal);
    void abortedBefore.signal;
    before.abort(new Error('before settle'));
    abortedBefore.dispose();
    expect(abortedBefore.signal.aborted).toBe(true);

    for (const readFirst of [false, true]) {
      const after = new AbortController();
      const context = contextOf(after.signal);
      if (readFirst) void context.signal;
      context.dispose();
      after.abort(new Error('after settle'));
      expect(context.signal.aborted).toBe(false);
    }
  });

  it('never reads the source of a signal no handler read (an adapter makes it on first read)', () => {
    let reads = 0;
    const source = {
      get signal() {
        reads++;
        return new AbortController().signal;
      },
    };
    const context = new DeliveryContext({
      clock: { now: () => 1_000 },
      at: 10_000,
      service: 'mail',
      event: { name: 'delivered', deliveryId: 'd_1' },
      dedupKey: 'mail:delivery:d_1',
      upstream: source,
      logger: undefined,
    });
    context.dispose();
    expect(reads).toBe(0);
    // Read after the handlers settled: a fresh signal, never aborted by what came after.
    expect(context.signal.aborted).toBe(false);
  });

  it('timeLeftMs works destructured and counts down to 0 on the clock', () => {
    let now = 1_000;
    const { timeLeftMs } = contextOf(undefined, { now: () => now });
    expect(timeLeftMs()).toBe(9_000);
    now = 12_000;
    expect(timeLeftMs()).toBe(0);
  });
});
