/**
 * The receiver's one timer (core/timers.ts): the deadlines and lease turns of all its deliveries are
 * entries of one scheduler that keeps a single timer armed for the earliest of them, on the clock's
 * own timers when it has them (virtual time here) or on an unref'd runtime timer, and none once
 * nothing waits.
 */
import { createMailReceiver, createMemoryStore } from '@svc/webhooks';
import { createVirtualClock } from '@svc/webhooks/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Due, Scheduler } from '../../src/shared/scheduler.js';
import { deferred, deliver, MAIL_SECRET, mailDelivery } from '../receivers/support.js';

const START = Date.UTC(2026, 0, 1);
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

class Entry implements Due {
  due = 0;
  prev: Due | undefined = undefined;
  next: Due | undefined = undefined;
  queued = false;
  constructor(
    readonly name: string,
    readonly fired: Array<[string, number]>,
  ) {}
  fire(now: number): undefined {
    this.fired.push([this.name, now]);
    return undefined;
  }
}

describe('Scheduler on a clock with timers (virtual time)', () => {
  it('fires entries in due order whatever the order they were added in, on one timer', async () => {
    const clock = createVirtualClock({ start: START });
    const scheduler = new Scheduler(clock);
    const fired: Array<[string, number]> = [];
    for (const [name, ms] of [
      ['c', 300],
      ['a', 100],
      ['d', 300],
      ['b', 200],
      ['e', 1_000],
    ] as const)
      scheduler.add(new Entry(name, fired), START + ms);
    expect(clock.pending()).toBe(1);
    await clock.advance(250);
    expect(fired).toEqual([
      ['a', START + 100],
      ['b', START + 200],
    ]);
    await clock.advance(10_000);
    expect(fired.map(([name]) => name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(clock.pending()).toBe(0);
    expect(scheduler.idle).toBe(true);
  });

  it('a removed entry never fires; removing the last one clears the timer', async () => {
    const clock = createVirtualClock({ start: START });
    const scheduler = new Scheduler(clock);
    const fired: Array<[string, number]> = [];
    const first = new Entry('first', fired);
    const second = new Entry('second', fired);
    scheduler.add(first, START + 100);
    scheduler.add(second, START + 200);
    scheduler.remove(first);
    scheduler.remove(first); // twice is harmless
    expect(clock.pending()).toBe(1);
    await clock.advance(150); // the timer armed for `first` finds nothing due and re-arms
    expect(fired).toEqual([]);
    expect(clock.pending()).toBe(1);
    scheduler.remove(second);
    expect(clock.pending()).toBe(0);
    await clock.advance(1_000);
    expect(fired).toEqual([]);
  });

  it('an entry added again moves; an earlier one re-arms the timer', async () => {
    const clock = createVirtualClock({ start: START });
    const scheduler = new Scheduler(clock);
    const fired: Array<[string, number]> = [];
    const moving = new Entry('moving', fired);
    scheduler.add(moving, START + 500);
    scheduler.add(new Entry('early', fired), START + 50);
    scheduler.add(moving, START + 20);
    expect(clock.pending()).toBe(1);
    await clock.advance(1_000);
    expect(fired).toEqual([
      ['moving', START + 20],
      ['early', START + 50],
    ]);
  });
});

describe('Scheduler on the runtime timers (a clock without timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('one runtime timer for many entries, fired when it elapses even if the clock does not move, none left after', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const scheduler = new Scheduler({ now: () => START }); // a clock that never moves
    const fired: Array<[string, number]> = [];
    const entries = ['a', 'b', 'c'].map((name) => new Entry(name, fired));
    for (const [i, entry] of entries.entries()) scheduler.add(entry, START + 100 * (3 - i));
    expect(vi.getTimerCount()).toBe(1);
    scheduler.remove(entries[0]!);
    vi.advanceTimersByTime(250);
    expect(fired).toEqual([
      ['c', START + 100],
      ['b', START + 200],
    ]);
    expect(vi.getTimerCount()).toBe(0);
    // Removed before it fired: the timer stays armed, fires once, finds nothing and stops.
    scheduler.add(entries[0]!, START + 1_000);
    scheduler.remove(entries[0]!);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2_000);
    expect(fired).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the runtime timer is unref'd: it never keeps a process alive", async () => {
    const scheduler = new Scheduler({ now: () => Date.now() });
    const before = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const entry = new Entry('far', []);
    scheduler.add(entry, Date.now() + 3_600_000);
    expect(process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length).toBe(before);
    scheduler.remove(entry);
  });
});

describe('a receiver holds one timer while deliveries run, none once they settled', () => {
  it('virtual clock: a slow handler keeps one timer (deadline and lease turns), none after it settles', async () => {
    const clock = createVirtualClock({ start: START });
    const receiver = createMailReceiver({
      secret: MAIL_SECRET,
      clock,
      dedup: createMemoryStore({ clock }),
      timeoutMs: 1_000,
      leaseMs: 3_000,
    });
    const gate = deferred();
    receiver.on('delivered', () => gate.promise);
    const answers = [
      deliver(receiver, mailDelivery('delivered')),
      deliver(receiver, mailDelivery('delivered')),
    ];
    await clock.settle();
    expect(clock.pending()).toBe(1);
    await clock.advance(1_000);
    expect((await Promise.all(answers)).map((answer) => answer.code)).toEqual([
      'handler_timeout',
      'handler_timeout',
    ]);
    await clock.advance(5_000); // lease turns go on while the handlers run
    expect(clock.pending()).toBe(1);
    gate.resolve();
    await turn();
    expect(clock.pending()).toBe(0);
    expect((await deliver(receiver, mailDelivery('delivered'))).status).toBe(200);
    expect(clock.pending()).toBe(0);
  });

  it('runtime timers: one timer while a handler runs; after it, the timer left fires once and re-arms for nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const receiver = createMailReceiver({ secret: MAIL_SECRET, dedup: createMemoryStore() });
      const gate = deferred();
      let started = false;
      receiver.on('delivered', () => {
        started = true;
        return gate.promise;
      });
      const answer = deliver(receiver, mailDelivery('delivered'));
      await vi.waitFor(() => expect(started).toBe(true));
      expect(vi.getTimerCount()).toBe(1);
      gate.resolve();
      expect((await answer).status).toBe(200);
      // Left armed for the next delivery (unref'd: it keeps no process alive), never re-armed.
      expect(vi.getTimerCount()).toBeLessThanOrEqual(1);
      vi.advanceTimersByTime(10_000);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
