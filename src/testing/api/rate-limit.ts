/**
 * Fixed windows on the emitter's clock: one minute per key (email-service §8: "configured per key,
 * per minute; default 1000; the counter resets the next minute") and one hour per IP ("500000
 * requests per hour").
 */

/** One counted call: whether it is over the limit, and the `X-RateLimit-*` headers of its window. */
export interface RateHit {
  limited: boolean;
  remaining: number;
  headers: Record<string, string>;
}

/** Counters of fixed windows of `windowMs`, one per key. */
export function createRateLimiter(now: () => number, windowMs = 60_000) {
  const windows = new Map<string, { window: number; count: number }>();
  return {
    /** Counts one call of `key`; the `X-RateLimit-*` headers and whether it is over the limit. */
    hit(key: string, limit: number): RateHit {
      const window = Math.floor(now() / windowMs);
      const entry = windows.get(key);
      const state = entry && entry.window === window ? entry : { window, count: 0 };
      state.count++;
      windows.set(key, state);
      const resetSeconds = ((window + 1) * windowMs) / 1000;
      const remaining = Math.max(0, limit - state.count);
      const headers = {
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': String(remaining),
        // Epoch seconds at which the window ends (the spec does not show the format).
        'X-RateLimit-Reset': String(resetSeconds),
      };
      if (state.count <= limit) return { limited: false, remaining, headers };
      return {
        limited: true,
        remaining,
        headers: { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(resetSeconds - now() / 1000))) },
      };
    },
  };
}
