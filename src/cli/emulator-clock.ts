/** The clock of a running emulator, for commands that talk to it (`recover --emulator`). */
import type { Clock } from '../shared/clock.js';
import { CliError, EXIT } from './exit-codes.js';
import { readEmulatorJson } from './http.js';
import { describeFetchError } from './output.js';

/** The emulator's clock, read once and then followed at its speed. */
export async function emulatorClock(base: string): Promise<Clock & { speed: number }> {
  let state: { now: number; speed: number };
  try {
    const response = await fetch(new URL('/_emulator/state', base), { signal: AbortSignal.timeout(10_000) });
    state = (await readEmulatorJson(response)) as { now: number; speed: number };
  } catch (error) {
    const { message, exitCode } = describeFetchError(error);
    throw new CliError(`${base}: ${message}`, exitCode, 'unreachable', 'Start it with: svc-webhooks emulate');
  }
  if (!Number.isFinite(state?.now) || !Number.isFinite(state?.speed) || state.speed <= 0) {
    throw new CliError(
      `${base}: not an emulator's answer (no clock in /_emulator/state).`,
      EXIT.failed,
      'emulator_invalid',
    );
  }
  const started = Date.now();
  const { now, speed } = state;
  return {
    speed,
    now: () => Math.round(now + (Date.now() - started) * speed),
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms / speed);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      }),
  };
}
