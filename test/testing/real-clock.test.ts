/**
 * createRealClock: the wall clock with every method of a Clock, so a receiver or a management client
 * can share it with an emitter (its `sleep` stops at the signal, as `Clock.sleep` promises).
 */
import { createRealClock } from '@svc/webhooks/testing';
import { describe, expect, it } from 'vitest';

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
