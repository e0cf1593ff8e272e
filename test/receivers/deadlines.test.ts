/**
 * Deadlines over user code: handlers and `onInvalid` hooks are bounded by `timeoutMs` on the
 * receiver's clock (its own timers when it has them, so a virtual clock moves a slow handler past
 * its deadline without waiting), and the answer's Retry-After tells the truth about the held claim.
 */
import {
  createCrmReceiver,
  createMailReceiver,
  createMemoryStore,
  type DedupStore,
  isWebhookError,
  type WebhookError,
} from '@svc/webhooks';
import { createVirtualClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../support/clock.js';
import {
  CRM_SECRET,
  crmDelivery,
  type Delivered,
  deferred,
  deliver,
  MAIL_SECRET,
  mailDelivery,
} from './support.js';

const START = Date.UTC(2026, 0, 1);
// One turn of the event loop: every pending promise continuation runs, no timer fires.
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a slow handler on a virtual clock', () => {
  it('a 12 s handler is answered 503 at 9 s of virtual time; its late completion settles the claim', async () => {
    const clock = createVirtualClock({ start: START });
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock });
    let finished = 0;
    let abortedAt: number | undefined;
    receiver.on('delivered', async (_event, { signal }) => {
      signal.addEventListener('abort', () => {
        abortedAt = clock.now();
      });
      await clock.sleep(12_000); // a slow downstream call, in virtual time
      finished++;
    });
    const delivery = mailDelivery('delivered');
    let outcome: Delivered | undefined;
    void deliver(receiver, delivery).then((result) => {
      outcome = result;
    });

    await clock.advance(8_999);
    await turn();
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    await turn();
    expect(outcome).toMatchObject({ status: 503, code: 'handler_timeout', kind: 'failed' });
    expect(abortedAt).toBe(START + 9_000);
    // The claim (lease 30 s from the claim at START) is held until the handler settles: a retry
    // before then gets 409, so the hint is the 21 s left on the lease, not 1 s.
    expect(outcome?.headers['retry-after']).toBe('21');
    const early = await deliver(receiver, delivery);
    expect(early).toMatchObject({ status: 409, code: 'delivery_in_progress' });
    expect(early.headers['retry-after']).toBe('21');

    await clock.advance(3_000); // the handler ends at 12 s; its success completes the claim
    await turn();
    expect(finished).toBe(1);
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(finished).toBe(1);
  });

  it('a timed-out handler that later fails releases its claim: the retry runs it again', async () => {
    const clock = createVirtualClock({ start: START });
    const receiver = createCrmReceiver({ secret: CRM_SECRET, clock, timeoutMs: 2_000, leaseMs: 5_000 });
    let runs = 0;
    receiver.on('deal.won', async () => {
      if (++runs > 1) return;
      await clock.sleep(3_000);
      throw new Error('downstream refused');
    });
    const delivery = crmDelivery('deal.won');
    const first = deliver(receiver, delivery);
    await clock.advance(2_000);
    const answered = await first;
    expect(answered).toMatchObject({ status: 503, code: 'handler_timeout' });
    expect(answered.headers['retry-after']).toBe('3');
    await clock.advance(1_000);
    await turn();
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'handled' });
    expect(runs).toBe(2);
  });
});

describe('Retry-After after a handler timeout', () => {
  it('is the time left on the lease, also with the runtime timers (a clock without timers)', async () => {
    const clock = createManualClock(START); // now() only: the receiver falls back to setTimeout
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock, timeoutMs: 20, leaseMs: 60_000 });
    const gate = deferred();
    receiver.on('delivered', () => gate.promise);
    const outcome = await deliver(receiver, mailDelivery('delivered'));
    expect(outcome).toMatchObject({ status: 503, code: 'handler_timeout' });
    // The manual clock did not move: the whole 60 s lease is still ahead.
    expect(outcome.headers['retry-after']).toBe('60');
    gate.resolve();
  });
});

describe('onInvalid hooks are bounded by the handler deadline', () => {
  const invalid = () => mailDelivery('bounced', { payload: { event: 'bounced', client_id: 'c' } });

  it('a hung hook: the 400 goes out at the deadline (virtual time) and onError hears of it', async () => {
    const clock = createVirtualClock({ start: START });
    const hung = deferred();
    const reports: Array<{ phase: string; code: unknown; message: string }> = [];
    let signal: AbortSignal | undefined;
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock })
      .onInvalid((delivery) => {
        signal = delivery.signal;
        expect(signal.aborted).toBe(false);
        return hung.promise;
      })
      .onError((error, info) =>
        reports.push({
          phase: info.phase,
          code: isWebhookError(error) ? error.code : undefined,
          message: String(error),
        }),
      );
    let outcome: Delivered | undefined;
    void deliver(receiver, invalid()).then((result) => {
      outcome = result;
    });
    await clock.advance(8_999);
    await turn();
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    await turn();
    expect(outcome).toMatchObject({ status: 400, code: 'invalid_payload' });
    expect(reports).toEqual([
      { phase: 'invalid_hook', code: 'handler_timeout', message: expect.stringContaining('9000 ms') },
    ]);
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as WebhookError | undefined)?.code).toBe('handler_timeout');
    // The hook keeps running; what it throws later still reaches onError.
    hung.reject(new Error('disk full'));
    await turn();
    expect(reports[1]).toMatchObject({ phase: 'invalid_hook', message: 'Error: disk full' });
  });

  it('a hung hook with the runtime timers: answered 400 after timeoutMs; later hooks still run', async () => {
    const ran: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET, timeoutMs: 20 })
      .onInvalid(() => new Promise(() => {}))
      .onInvalid(() => void ran.push('second'));
    expect(await deliver(receiver, invalid())).toMatchObject({ status: 400, code: 'invalid_payload' });
    // The second hook waits behind the hung first one (hooks run in order), never before it.
    expect(ran).toEqual([]);
  });

  it('synchronous hooks need no timer; a throwing one does not stop the next', async () => {
    const ran: string[] = [];
    const phases: string[] = [];
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock: createVirtualClock() })
      .onInvalid(() => {
        throw new Error('first');
      })
      .onInvalid(() => void ran.push('second'))
      .onError((_error, info) => void phases.push(info.phase));
    // Answered without moving the virtual clock: no deadline was armed.
    expect(await deliver(receiver, invalid())).toMatchObject({ status: 400 });
    expect(ran).toEqual(['second']);
    expect(phases).toEqual(['invalid_hook']);
  });
});

describe('onError never holds an answer', () => {
  it('a hook that never settles does not delay the 500 of a failing handler', async () => {
    const clock = createVirtualClock({ start: START });
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock })
      .on('delivered', () => {
        throw new Error('boom');
      })
      .onError(() => new Promise(() => {}));
    // No clock movement and no timer: the answer does not wait for the hook.
    expect(await deliver(receiver, mailDelivery('delivered'))).toMatchObject({
      status: 500,
      code: 'handler_failed',
    });
  });
});

describe('clock timers at creation', () => {
  it('a clock with setTimeout but no clearTimeout (or the reverse) is refused with options_invalid', () => {
    const half = [
      { now: () => 0, setTimeout: () => 1 },
      { now: () => 0, clearTimeout: () => {} },
    ];
    for (const clock of half) {
      let caught: unknown;
      try {
        createMailReceiver({ secret: MAIL_SECRET, clock });
      } catch (error) {
        caught = error;
      }
      expect(isWebhookError(caught) && caught.code).toBe('options_invalid');
      expect((caught as Error).message).toMatch(/both setTimeout\(\) and clearTimeout\(\)/);
    }
  });
});

describe('a slow dedup store after the handlers', () => {
  it('a complete that does not answer: 200 at the deadline, not after storeTimeoutMs', async () => {
    const clock = createVirtualClock({ start: START });
    const inner = createMemoryStore({ clock });
    const stalled = deferred();
    const dedup: DedupStore = {
      claim: (key, options) => inner.claim(key, options),
      complete: async (key, token, options) => {
        await stalled.promise;
        return inner.complete(key, token, options);
      },
      release: (key, token) => inner.release(key, token),
    };
    // storeTimeoutMs alone would let the answer wait 20 s, long after the sender's 10 s.
    const receiver = createMailReceiver({ secret: MAIL_SECRET, clock, dedup, storeTimeoutMs: 20_000 });
    let runs = 0;
    receiver.on('delivered', async () => {
      runs++;
      await clock.sleep(8_000);
    });
    const delivery = mailDelivery('delivered');
    let outcome: Delivered | undefined;
    void deliver(receiver, delivery).then((result) => {
      outcome = result;
    });
    await clock.advance(8_999);
    await turn();
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    await turn();
    // The handlers succeeded: acknowledged (at-least-once edge as for a failed complete).
    expect(outcome).toMatchObject({ status: 200, kind: 'handled' });
    stalled.resolve(); // the store comes back; the complete lands
    await turn();
    expect(await deliver(receiver, delivery)).toMatchObject({ status: 200, kind: 'duplicate' });
    expect(runs).toBe(1);
  });

  it('a release that does not answer: 500 at the deadline', async () => {
    const clock = createVirtualClock({ start: START });
    const inner = createMemoryStore({ clock });
    const stalled = deferred();
    const dedup: DedupStore = {
      claim: (key, options) => inner.claim(key, options),
      complete: (key, token, options) => inner.complete(key, token, options),
      release: async (key, token) => {
        await stalled.promise;
        return inner.release(key, token);
      },
    };
    const receiver = createCrmReceiver({ secret: CRM_SECRET, clock, dedup, storeTimeoutMs: 20_000 });
    receiver.on('deal.won', () => {
      throw new Error('downstream refused');
    });
    let outcome: Delivered | undefined;
    void deliver(receiver, crmDelivery('deal.won')).then((result) => {
      outcome = result;
    });
    await clock.advance(8_999);
    await turn();
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    await turn();
    expect(outcome).toMatchObject({ status: 500, code: 'handler_failed' });
    stalled.resolve();
  });
});
