import type { Clock } from '@svc/webhooks';

/** A clock tests move by hand (epoch ms). */
export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

/** A {@link ManualClock} starting at `start` (default 2026-01-01T00:00:00Z). */
export function createManualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    set(ms) {
      now = ms;
    },
  };
}
