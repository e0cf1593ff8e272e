/**
 * The clock `recover --emulator` follows: the emulator's time, read once from /_emulator/state (a
 * real server on 127.0.0.1 port 0), then run at its speed. It reads what the emulator's clock reads,
 * however long the answer took, and a wait on it (a rate-limit window) ends once it has moved by the
 * time asked, even when the runtime fires its timer early.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { emulatorClock } from '../../src/cli/emulator-clock.js';

// Decades before the wall clock: a clock that read the wall instead could not show it.
const EMULATED_NOW = Date.parse('2000-01-01T00:00:00.000Z');
// How long the answer takes after the emulator read its clock (a loaded machine's slow answer).
const ANSWER_DELAY_MS = 50;

/** The clock of an emulator whose state answers `{ now, wallNow: wall(), speed }`, `ANSWER_DELAY_MS` late. */
async function followed(speed: number, wall: () => number | undefined = Date.now) {
  vi.useRealTimers();
  let wallNow: number | undefined;
  const server = createServer((_req, res) => {
    wallNow = wall();
    const body = JSON.stringify({ now: EMULATED_NOW, wallNow, speed });
    setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end(body), ANSWER_DELAY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sent = Date.now();
  try {
    const clock = await emulatorClock(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    // The wall stands still from here (fake Date): the readings below are exact.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    return { clock, sent, wallNow };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('emulatorClock', () => {
  it('reads the emulator’s time from the wall time the emulator read it at, then runs at its speed', async () => {
    const { clock, wallNow } = await followed(600);
    expect(clock.speed).toBe(600);
    // Not from the answer's arrival (50 ms later: 30 emulated seconds behind).
    expect(clock.now()).toBe(EMULATED_NOW + (Date.now() - wallNow!) * 600);
    vi.advanceTimersByTime(10);
    expect(clock.now()).toBe(EMULATED_NOW + (Date.now() - wallNow!) * 600);
  });

  it('an emulator on another wall clock (its wall time outside the call) is followed from the answer', async () => {
    const { clock, sent } = await followed(600, () => Date.now() - 3_600_000);
    expect(clock.now()).toBeGreaterThanOrEqual(EMULATED_NOW);
    expect(clock.now()).toBeLessThanOrEqual(EMULATED_NOW + (Date.now() - sent) * 600);
    const old = await followed(60, () => undefined);
    expect(old.clock.now()).toBeGreaterThanOrEqual(EMULATED_NOW);
    expect(old.clock.now()).toBeLessThanOrEqual(EMULATED_NOW + (Date.now() - old.sent) * 60);
  });

  it('a 1-minute wait at 600× that the runtime ends 2 real ms early lasts until the clock reads +1 minute', async () => {
    const { clock } = await followed(600);
    const start = clock.now();
    let woke: number | undefined;
    void clock.sleep!(60_000).then(() => {
      woke = clock.now();
    });
    // The wall clock reads 2 ms behind the runtime's timers (a timer armed on a stale loop time).
    vi.setSystemTime(Date.now() - 2);
    await vi.advanceTimersByTimeAsync(100);
    expect(woke).toBeUndefined();
    await vi.advanceTimersByTimeAsync(2);
    expect(woke).toBeGreaterThanOrEqual(start + 60_000);
  });

  it('a wait rejects with the signal’s reason when it aborts', async () => {
    const { clock } = await followed(60);
    const controller = new AbortController();
    const sleeping = clock.sleep!(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
  });
});
