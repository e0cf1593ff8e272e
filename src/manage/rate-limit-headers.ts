/**
 * Reading `Retry-After` and `X-RateLimit-*`. email-service §8 names the three `X-RateLimit-*` headers
 * but not their formats, so every common form is read: `Reset` as epoch seconds, epoch ms, or
 * seconds from now; `Retry-After` as seconds or an HTTP date (RFC 9110 §10.2.3).
 */

// Below this, a Reset value is a number of seconds from now rather than an epoch time (1e9 s is 2001).
const EPOCH_SECONDS_MIN = 1e9;
const EPOCH_MS_MIN = 1e12;

/**
 * The furthest ahead an announced time is taken: one day. The email service's windows last a minute
 * (email-service §8); a later time, or one beyond the range of a `Date` (a hostile `Retry-After:
 * 9999…`), is read as now + one day, so it stays a valid date and still fails the call with
 * `rate_limited` above `maxRetryWaitMs`.
 */
export const MAX_ANNOUNCED_WAIT_MS = 86_400_000;

const clamp = (at: number, now: number): number => Math.min(at, now + MAX_ANNOUNCED_WAIT_MS);

/**
 * Epoch ms at which `X-RateLimit-Reset` says the window resets (at most {@link MAX_ANNOUNCED_WAIT_MS}
 * ahead), or null when absent or unreadable.
 */
export function rateLimitResetAt(headers: Headers, now: number): number | null {
  const raw = headers.get('x-ratelimit-reset')?.trim();
  if (!raw) return null;
  if (/^\d+(\.\d+)?$/.test(raw)) {
    const value = Number(raw);
    if (value >= EPOCH_MS_MIN) return clamp(value, now);
    if (value >= EPOCH_SECONDS_MIN) return clamp(value * 1000, now);
    return clamp(now + value * 1000, now);
  }
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : clamp(date, now);
}

/** Epoch ms that `Retry-After` points at (at most {@link MAX_ANNOUNCED_WAIT_MS} ahead), or null. */
export function retryAfterAt(headers: Headers, now: number): number | null {
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return null;
  if (/^\d+$/.test(raw)) return clamp(now + Number(raw) * 1000, now);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : clamp(date, now);
}

/**
 * When a refused call may be sent again: the later of `Retry-After` and `X-RateLimit-Reset` (either
 * alone is honoured), or null when the answer carries neither.
 */
export function retryAt(headers: Headers, now: number): number | null {
  const times = [retryAfterAt(headers, now), rateLimitResetAt(headers, now)].filter(
    (t): t is number => t !== null,
  );
  return times.length === 0 ? null : Math.max(...times);
}

/** `X-RateLimit-Remaining` as a number, or null. */
export function rateLimitRemaining(headers: Headers): number | null {
  const raw = headers.get('x-ratelimit-remaining')?.trim();
  return raw && /^\d+$/.test(raw) ? Number(raw) : null;
}
