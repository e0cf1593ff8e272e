import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../src/testing/index.js';

describe('createVirtualClock', () => {
  it('stands still until advanced, then fires due timers in time order', async () => {
    const clock = createVirtualClock({ start: 1_000 });
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 200);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 100);
    clock.setTimeout(() => fired.push(`a2@${clock.now()}`), 100);
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 500);
    expect(clock.now()).toBe(1_000);
    await clock.advance(200);
    expect(fired).toEqual(['a@1100', 'a2@1100', 'b@1200']);
    expect(clock.now()).toBe(1_200);
    expect(clock.pending()).toBe(1);
    await clock.runAll();
    expect(fired.at(-1)).toBe('c@1500');
  });

  it('awaits the async work of a timer before firing the next one', async () => {
    const clock = createVirtualClock({ start: 0 });
    const order: string[] = [];
    clock.setTimeout(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('slow done');
    }, 10);
    clock.setTimeout(() => order.push('next'), 20);
    await clock.advance(30);
    expect(order).toEqual(['slow done', 'next']);
  });

  it('fires timers scheduled while running, and clearTimeout cancels', async () => {
    const clock = createVirtualClock({ start: 0 });
    const seen: number[] = [];
    const id = clock.setTimeout(() => seen.push(-1), 5);
    clock.clearTimeout(id);
    clock.setTimeout(() => {
      seen.push(clock.now());
      clock.setTimeout(() => seen.push(clock.now()), 60_000);
    }, 1);
    await clock.runAll();
    expect(seen).toEqual([1, 60_001]);
  });

  it('moves on past work parked on clock.sleep() instead of deadlocking', async () => {
    const clock = createVirtualClock({ start: 0 });
    let woke = -1;
    void clock.track(
      (async () => {
        await clock.sleep(11_000);
        woke = clock.now();
      })(),
    );
    let timeoutAt = -1;
    clock.setTimeout(() => {
      timeoutAt = clock.now();
    }, 10_000);
    await clock.advance(10_000);
    expect(timeoutAt).toBe(10_000);
    expect(woke).toBe(-1);
    await clock.advance(1_000);
    expect(woke).toBe(11_000);
  });

  it('work resumed by sleep() runs its promise chain before the next timer moves time on', async () => {
    // A handler past its deadline is not tracked work: its late success must still happen at the
    // time it woke, not after later timers (a retry, a lease end) already fired.
    const clock = createVirtualClock({ start: 0 });
    const seen: string[] = [];
    void (async () => {
      await clock.sleep(1_000);
      for (let i = 0; i < 20; i++) await null; // a chain of continuations, no timer
      seen.push(`woken work done at ${clock.now()}`);
    })();
    clock.setTimeout(() => seen.push(`timer at ${clock.now()}`), 2_000);
    await clock.runAll();
    expect(seen).toEqual(['woken work done at 1000', 'timer at 2000']);
  });

  it('advanceTo never moves backwards', async () => {
    const clock = createVirtualClock({ start: new Date('2025-01-01T00:00:00.000Z') });
    await clock.advanceTo(Date.parse('2024-01-01T00:00:00.000Z'));
    expect(new Date(clock.now()).toISOString()).toBe('2025-01-01T00:00:00.000Z');
  });
});
