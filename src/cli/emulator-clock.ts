/** The clock of a running emulator, for commands that talk to it (`recover --emulator`). */
import { type Clock, systemClock } from '../shared/clock.js';
import { createScaledClock } from '../testing/clock/real-clock.js';
import { CliError, EXIT } from './exit-codes.js';
import { readEmulatorJson } from './http.js';
import { describeFetchError } from './output.js';

/** The emulator's clock, read once and then followed at its speed (its time, waits and timers). */
export async function emulatorClock(
  base: string,
): Promise<Required<Pick<Clock, 'now' | 'sleep' | 'setTimeout' | 'clearTimeout'>> & { speed: number }> {
  let state: { now: number; wallNow?: unknown; speed: number };
  const sent = Date.now();
  try {
    const response = await fetch(new URL('/_emulator/state', base), { signal: AbortSignal.timeout(10_000) });
    state = (await readEmulatorJson(response)) as typeof state;
  } catch (error) {
    const { message, exitCode } = describeFetchError(error);
    throw new CliError(`${base}: ${message}`, exitCode, 'unreachable', 'Start it with: svc-webhooks emulate');
  }
  const received = Date.now();
  if (!Number.isFinite(state?.now) || !Number.isFinite(state?.speed) || state.speed <= 0) {
    throw new CliError(
      `${base}: not an emulator's answer (no clock in /_emulator/state).`,
      EXIT.failed,
      'emulator_invalid',
    );
  }
  const { now, wallNow, speed } = state;
  // The wall time the emulator read its clock at, when it shares this machine's wall clock (it falls
  // within the call): followed from there, this clock reads the emulator's. Otherwise from the answer's
  // arrival, behind it by the call's time × speed.
  const local = typeof wallNow === 'number' && wallNow >= sent && wallNow <= received;
  // A wait ends once this clock has moved by the time asked (see createScaledClock).
  const clock = createScaledClock(speed, systemClock.now, { at: now, wall: local ? wallNow : received });
  const { setTimeout, clearTimeout } = clock;
  return { speed, now: clock.now, sleep: clock.sleep, setTimeout, clearTimeout };
}
