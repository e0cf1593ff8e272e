/**
 * The claim's lease is kept while the handlers run (core/lease.ts): a handler that ignores its signal
 * and outlives its deadline and its lease is never overlapped by a retry, and a run whose lease the
 * store refused to extend is reported loudly (`lease_lost`). Virtual time: nothing waits.
 */
import {
  createCrmReceiver,
  createMailReceiver,
  createMemoryStore,
  type DedupStore,
  type ErrorInfo,
  isWebhookError,
  type LogEntry,
} from '@svc/webhooks';
import { createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';
import {
  CRM_SECRET,
  crmDelivery,
  deferred,
  deliver,
  MAIL_SECRET,
  mailDelivery,
} from '../receivers/support.js';

const START = Date.UTC(2026, 0, 1);
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('direct mode: a handler past its deadline keeps its claim until it settles', () => {
  it('a retry long after the lease would have ended is 409, never a second run; then a duplicate', async () => {
    const clock = createVirtualClock({ start: START });
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock, timeoutMs: 1_000, leaseMs: 3_000 });
    const gate = deferred();
    let running = 0;
    let most = 0;
    let runs = 0;
    receiver.on('delivered', async () => {
      runs++;
      most = Math.max(most, ++running);
      await gate.promise; // ignores its signal
      running--;
    });
    const delivery = mailDelivery('delivered');
    const first = deliver(receiver, delivery);
    await clock.advance(1_000);
    expect(await first).toMatchObject({ status: 503, code: 'handler_timeout' });
    for (let i = 0; i < 5; i++) {
      await clock.advance(3_000); // past the lease each time
      const retry = deliver(receiver, delivery);
      await clock.advance(1_000); // the retry's own deadline, had it run the handler
      expect(await retry).toMatchObject({ status: 409, code: 'delivery_in_progress' });
    }
    expect([runs, most]).toEqual([1, 1]);
    gate.resolve();
    await turn();
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
    // Nothing keeps extending once it settled.
    expect(clock.pending()).toBe(0);
  });
});

describe('a run whose lease the store refuses to extend', () => {
  it('is reported once as lease_lost to onError and the error log, and its signal aborts', async () => {
    const clock = createVirtualClock({ start: START });
    const inner = createMemoryStore({ clock });
    // A store whose lease was lost: another attempt took the key over (e.g. the store was restored).
    const store: DedupStore = {
      claim: (key, options) => inner.claim(key, options),
      complete: (key, token, options) => inner.complete(key, token, options),
      release: (key, token, options) => inner.release(key, token, options),
      extend: async () => false,
    };
    const logs: LogEntry[] = [];
    const reports: { code: unknown; phase: string }[] = [];
    const receiver = createCrmReceiver({
      secret: CRM_SECRET,
      clock,
      dedup: store,
      timeoutMs: 5_000,
      leaseMs: 6_000,
      logger: (entry) => logs.push(entry),
    }).onError((error, info: ErrorInfo<unknown>) => {
      reports.push({ code: isWebhookError(error) ? error.code : error, phase: info.phase });
    });
    let reason: unknown;
    receiver.on('deal.won', async (_event, { signal }) => {
      await new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => {
          reason = signal.reason;
          resolve();
        });
      });
    });
    const answer = deliver(receiver, crmDelivery('deal.won'));
    await clock.advance(2_000); // the first extension, a third of the lease in
    expect(reports).toEqual([{ code: 'lease_lost', phase: 'lease' }]);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'error', message: 'webhook claim lost while its handlers ran' }),
    );
    expect(reason).toMatchObject({ code: 'lease_lost' });
    await answer;
    // The complete the handler's success attempts is fenced too: not reported a second time.
    expect(reports).toEqual([{ code: 'lease_lost', phase: 'lease' }]);
  });
});
