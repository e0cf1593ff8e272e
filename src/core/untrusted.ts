/**
 * Bounding values an unauthenticated sender chooses (header values, delivery ids, event names) before
 * they reach a log line: a sender must not pick how much a receiver writes per request.
 */

/**
 * Characters of an untrusted value kept in log fields; the rest is replaced by a count.
 */
export const UNTRUSTED_LOG_CHARS = 128;

/**
 * `value` cut to {@link UNTRUSTED_LOG_CHARS} characters plus `…(+N chars)` saying how much was left
 * out; shorter values and `undefined` come back unchanged. A surrogate pair is never split.
 */
export function truncateUntrusted(value: string, max?: number): string;
export function truncateUntrusted(value: string | undefined, max?: number): string | undefined;
export function truncateUntrusted(value: string | undefined, max = UNTRUSTED_LOG_CHARS): string | undefined {
  if (value === undefined || value.length <= max) return value;
  const code = value.charCodeAt(max - 1);
  // A high surrogate at the cut would leave half a character (invalid UTF-16 in a JSON log).
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${value.slice(0, end)}…(+${value.length - end} chars)`;
}
