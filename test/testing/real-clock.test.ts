/**
 * createRealClock: the wall clock with every method of a Clock, so a receiver or a management client
 * can share it with an emitter (its `sleep` stops at the signal, as `Clock.sleep` promises). Its
 * scaled form (the emulator's `--speed`) never runs a timer before its time on the clock.
 */
import { createRealClock } from '@svc/webhooks/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createScaledClock } from '../../src/testing/clock/real-clock.js';

describe('createRealClock', () => {
  it('reads the wall clock and fires its timers; a cleared timer never fires', async () => {
    const clock = createRealClock();
    const before = Date.now();
    expect(clock.now()).toBeGreaterThanOrEqual(before);
    const fired: string[] = [];
    const cleared = clock.setTimeout(() => fired.push('cleared'), 5);
    clock.setTimeout(() => fired.push('kept'), 5);
    clock.clearTimeout(cleared);
    await clock.sleep(20);
    expect(fired).toEqual(['kept']);
  });

  it('sleep rejects with the signal’s reason when it aborts first, and at once when already aborted', async () => {
    const clock = createRealClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    await expect(clock.sleep(60_000, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});

describe('createScaledClock: a timer runs when the clock has reached its time, never before', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /**
   * Fake runtime timers and a wall clock that reads `lag` ms behind them, as when Node fires a timer
   * armed on a stale cached loop time: the runtime's 100 ms are up while the wall shows 98.
   */
  function laggingWall(speed: number) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const wall = { lag: 0 };
    const clock = createScaledClock(speed, () => Date.now() - wall.lag);
    return { clock, wall };
  }

  it('at 600×: a 1-minute timer the runtime fires 2 real ms early waits until the clock reads +1 minute', () => {
    const { clock, wall } = laggingWall(600);
    const due = clock.now() + 60_000;
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 60_000);
    wall.lag = 2;
    vi.advanceTimersByTime(100);
    // The runtime's 100 ms are up; on the clock 2 × 600 ms are still to go.
    expect(clock.now()).toBe(due - 1_200);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual([due]);
  });

  it('sleep resolves only once the clock has moved by the time asked, at any speed', async () => {
    for (const speed of [1, 60, 600]) {
      const { clock, wall } = laggingWall(speed);
      const start = clock.now();
      let woke: number | undefined;
      void clock.sleep(120_000).then(() => {
        woke = clock.now();
      });
      wall.lag = 3;
      await vi.advanceTimersByTimeAsync(120_000 / speed);
      expect(woke).toBeUndefined();
      await vi.advanceTimersByTimeAsync(3);
      expect(woke).toBeGreaterThanOrEqual(start + 120_000);
      vi.useRealTimers();
    }
  });

  it('a timer waiting out the rest is still cancelled by clearTimeout and by stop()', () => {
    const { clock, wall } = laggingWall(600);
    const fired: string[] = [];
    const cleared = clock.setTimeout(() => fired.push('cleared'), 60_000);
    clock.setTimeout(() => fired.push('stopped'), 60_000);
    wall.lag = 2;
    vi.advanceTimersByTime(100);
    clock.clearTimeout(cleared);
    clock.stop();
    vi.advanceTimersByTime(1_000);
    expect(fired).toEqual([]);
  });
});
