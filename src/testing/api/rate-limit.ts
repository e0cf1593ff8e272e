/**
 * Per-key fixed one-minute windows on the emitter's clock (email-service §8: "configured per key,
 * per minute; default 1000; the counter resets the next minute").
 */
export function createRateLimiter(now: () => number) {
  const windows = new Map<string, { window: number; count: number }>();
  return {
    /** Counts one call of `key`; the `X-RateLimit-*` headers and whether it is over the limit. */
    hit(key: string, limit: number): { limited: boolean; headers: Record<string, string> } {
      const window = Math.floor(now() / 60_000);
      const entry = windows.get(key);
      const state = entry && entry.window === window ? entry : { window, count: 0 };
      state.count++;
      windows.set(key, state);
      const resetSeconds = ((window + 1) * 60_000) / 1000;
      const headers = {
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': String(Math.max(0, limit - state.count)),
        // Epoch seconds at which the next minute starts (the format is not shown in the spec).
        'X-RateLimit-Reset': String(resetSeconds),
      };
      if (state.count <= limit) return { limited: false, headers };
      return {
        limited: true,
        headers: { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(resetSeconds - now() / 1000))) },
      };
    },
  };
}
